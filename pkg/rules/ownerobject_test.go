package rules_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/verdict"
)

// rolloutRoles labels an Argo Rollout's Pods stable or canary, by
// whether the Pod's template hash is the Rollout's status.stableRS, and
// selects those of the Rollouts whose team label is payments.
const rolloutRoles = `rules:
- name: role
  resources: [pods]
  ownerObject: {through: [replicasets.apps, rollouts.argoproj.io]}
  when: ownerObject.metadata.?labels.team.orValue('') == 'payments'
  labels:
    role:
      cel: "object.metadata.?labels['rollouts-pod-template-hash'].orValue('') == ownerObject.?status.?stableRS.orValue('') ? 'stable' : 'canary'"
      default: unknown
`

// stableRSReads are the fields rolloutRoles reads of its owners, which
// their caches keep.
var stableRSReads = [][]string{{"metadata", "labels", "team"}, {"status", "stableRS"}}

// ownerContents finds owners, with their fields, among objs, by source.
type ownerContents map[*source.Source][]*unstructured.Unstructured

func (l ownerContents) Find(src *source.Source, ns, name string) (metav1.Object, bool) {
	for _, o := range l[src] {
		if o.GetNamespace() == ns && o.GetName() == name {
			return o, true
		}
	}
	return nil, false
}

// ownerContent returns an object of res named name with uid and labels,
// owned by owner when it is not nil, with fields besides its metadata.
func ownerContent(res source.Resource, name, uid string, labels map[string]string, owner *unstructured.Unstructured, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	u.SetAPIVersion(res.GVR.GroupVersion().String())
	u.SetKind(res.Kind)
	u.SetNamespace("shop")
	u.SetName(name)
	u.SetUID(types.UID(uid))
	u.SetLabels(labels)
	rulestest.SetController(u, owner)
	return u
}

// TestOwnerObject checks CEL's ownerObject: a Pod reads its Rollout's
// status through its ReplicaSet, in a value and in when; an orphan gets
// the default; explain shows the owner's fields read; the owners' caches
// keep those fields, and a change of one of them matters.
func TestOwnerObject(t *testing.T) {
	tg, _ := compileOwners(t, rolloutRoles, replicaSets, rollouts)
	rolloutSrc, rsSrc := source.OwnerOf(rollouts, stableRSReads...), source.OwnerOf(replicaSets, stableRSReads...)
	if got, want := tg.Sources(), []*source.Source{source.Namespace, rsSrc, rolloutSrc}; !slices.Equal(got, want) {
		t.Fatalf("Sources() = %v, want the namespace and one source per owner resource, keeping the fields read", got)
	}
	if !reflect.DeepEqual(rolloutSrc.Keep, stableRSReads) || rolloutSrc == source.OwnerOf(rollouts) {
		t.Errorf("the Rollouts' source keeps %v, want %v, apart from the source of fromOwner", rolloutSrc.Keep, stableRSReads)
	}
	rollout := ownerContent(rollouts, "web", "ro-1", map[string]string{"team": "payments"}, nil, map[string]any{"status": map[string]any{"stableRS": "abc"}})
	other := ownerContent(rollouts, "batch", "ro-2", map[string]string{"team": "data"}, nil, nil)
	stableRS := ownerContent(replicaSets, "web-abc", "rs-1", nil, rollout, nil)
	canaryRS := ownerContent(replicaSets, "web-def", "rs-2", nil, rollout, nil)
	otherRS := ownerContent(replicaSets, "batch-1", "rs-3", nil, other, nil)
	look := ownerContents{rolloutSrc: {rollout, other}, rsSrc: {stableRS, canaryRS, otherRS}}
	pod := func(name, hash string, owner *unstructured.Unstructured) metav1.Object {
		return ownerContent(source.Resource{GVR: rulestest.Pods.GVR, Kind: "Pod"}, name, "p-"+name, map[string]string{"rollouts-pod-template-hash": hash}, owner, nil)
	}
	for _, tc := range []struct {
		name  string
		pod   metav1.Object
		want  map[string]string
		input string
	}{
		{"a Pod of the stable ReplicaSet", pod("web-abc-1", "abc", stableRS), map[string]string{"role": "stable"}, `"abc"`},
		{"a Pod of the canary", pod("web-def-1", "def", canaryRS), map[string]string{"role": "canary"}, `"abc"`},
		{"another team's Rollout is not selected", pod("batch-1-1", "x", otherRS), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tg.Evaluate(tc.pod, look)
			if !reflect.DeepEqual(ev.Desired.Labels, tc.want) {
				t.Errorf("labels = %v, want %v (problems %q)", ev.Desired.Labels, tc.want, ev.Problems)
			}
			if tc.input == "" {
				return
			}
			v := tg.Explain(tc.pod, look)
			in := slices.IndexFunc(v[0].Wants[0].Inputs, func(in verdict.Input) bool { return in.Field == "ownerObject.status.stableRS" })
			if in < 0 || *v[0].Wants[0].Inputs[in].Value != tc.input {
				t.Errorf("Explain() inputs %+v, want ownerObject.status.stableRS = %s", v[0].Wants[0].Inputs, tc.input)
			}
		})
	}
	t.Run("an orphan has no owner to select it", func(t *testing.T) {
		if ev := tg.Evaluate(pod("bare", "abc", nil), look); len(ev.Desired.Labels) != 0 {
			t.Errorf("labels = %v, want none: when reads no owner", ev.Desired.Labels)
		}
	})
	promoted := rollout.DeepCopy()
	promoted.Object["status"] = map[string]any{"stableRS": "def"}
	scaled := rollout.DeepCopy()
	scaled.Object["status"] = map[string]any{"stableRS": "abc", "replicas": int64(3)}
	if !tg.SourceChangeMatters(rolloutSrc, rollout, promoted) || tg.SourceChangeMatters(rolloutSrc, rollout, scaled) {
		t.Error("SourceChangeMatters: want a change of status.stableRS to matter, and one of status.replicas not")
	}
}

// TestOwnerObjectDefault checks that an orphan's value is the default,
// said as a missing owner.
func TestOwnerObjectDefault(t *testing.T) {
	tg, _ := compileOwners(t, "rules:\n- name: team\n  resources: [pods]\n  labels:\n    team: {cel: 'ownerObject.metadata.labels.team', default: none}\n", replicaSets, rulestest.Deployments)
	pod := ownerContent(source.Resource{GVR: rulestest.Pods.GVR, Kind: "Pod"}, "bare", "p-1", nil, nil, nil)
	ev := tg.Evaluate(pod, ownerContents{})
	if want := map[string]string{"team": "none"}; !reflect.DeepEqual(ev.Desired.Labels, want) {
		t.Errorf("labels = %v, want %v (problems %q)", ev.Desired.Labels, want, ev.Problems)
	}
	if d := ev.Defaulted(rulefile.LabelKind, "team"); !strings.Contains(d, "no controller owner") {
		t.Errorf("Defaulted = %q, want it to say the Pod has no owner", d)
	}
}

// TestParseOwnerObject checks a rule's ownerObject: the default walk when
// an expression reads ownerObject, and the errors that name the field.
func TestParseOwnerObject(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     *rulefile.Owners
		errs     []string
	}{
		{name: "the default walk", in: "  labels: {team: {cel: 'ownerObject.metadata.labels.team'}}\n",
			want: &rulefile.Owners{Through: source.DefaultOwners}},
		{name: "a named owner", in: "  ownerObject: {owner: deployments.apps}\n  when: ownerObject.spec.replicas > 1\n  labels: {big: 'true'}\n",
			want: &rulefile.Owners{Hop: "deployments.apps", Through: source.DefaultOwners}},
		{name: "none read", in: "  ownerObject: {through: [replicasets.apps]}\n  labels: {team: web}\n", errs: []string{
			`rules.yaml:4: rules[0].ownerObject: no CEL expression of the rule reads ownerObject: …`}},
		{name: "a key of fromOwner", in: "  ownerObject: {label: team}\n  labels: {team: {cel: 'ownerObject.metadata.name'}}\n", errs: []string{
			`rules.yaml:4: rules[0].ownerObject.label: unknown field; …`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: [pods]\n"+tc.in))
			if tc.errs != nil {
				checkLines(t, err, tc.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Rules[0].OwnerObject; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("OwnerObject = %+v, want %+v", got, tc.want)
			}
		})
	}
}
