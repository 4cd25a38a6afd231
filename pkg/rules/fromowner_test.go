package rules_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/verdict"
)

// TestParseFromOwner checks the {fromOwner: {…}} form: the owners it
// walks by default, a named hop, a list to walk through, and the errors
// that name the field.
func TestParseFromOwner(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     *rulefile.Owners
		errs     []string
	}{
		{name: "the root, through the default owners", in: "{team: {fromOwner: {label: team}}}",
			want: &rulefile.Owners{Through: source.DefaultOwners}},
		{name: "a named hop is walked through", in: "{team: {fromOwner: {label: team, owner: rollouts.argoproj.io}}}",
			want: &rulefile.Owners{Hop: "rollouts.argoproj.io", Through: append(slices.Clone(source.DefaultOwners), "rollouts.argoproj.io")}},
		{name: "only the resources named", in: "{team: {fromOwner: {annotation: example.com/team, through: [replicasets.apps, rollouts.argoproj.io]}}}",
			want: &rulefile.Owners{Through: []string{"replicasets.apps", "rollouts.argoproj.io"}}},
		{name: "no key", in: "{team: {fromOwner: {owner: deployments.apps}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.fromOwner: must name the owner's key to read: {label: KEY} or {annotation: KEY}`}},
		{name: "an empty list", in: "{team: {fromOwner: {label: team, through: []}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.fromOwner.through: must name at least one owner resource to walk through`}},
		{name: "a bad resource and an unknown field", in: "{team: {fromOwner: {label: team, owner: 'a/b', hop: 1}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.fromOwner.owner: invalid resource "a/b": …`,
			`rules.yaml:4: rules[0].labels.team.fromOwner.hop: unknown field; …`}},
		{name: "not a mapping", in: "{team: {fromOwner: team}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.fromOwner: must be {label: KEY} or {annotation: KEY}, with owner: RESOURCE or through: [RESOURCE, …]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: [pods]\n  labels: "+tc.in+"\n"))
			if tc.errs != nil {
				checkLines(t, err, tc.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			k := f.Rules[0].Labels.FromRelated["team"]
			if k.Source != source.Owner || !reflect.DeepEqual(k.Owners, tc.want) {
				t.Errorf("got %+v (owners %+v), want source.Owner and owners %+v", k, k.Owners, tc.want)
			}
		})
	}
}

// Owner resources as a cluster serves them.
var (
	replicaSets = source.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, Kind: "ReplicaSet", Namespaced: true}
	rollouts    = source.Resource{GVR: schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}, Kind: "Rollout", Namespaced: true}
)

// compileOwners compiles content for a cluster that serves pods and
// resources, each named by its plural and group; an owner resource it
// does not serve is returned as unresolved.
func compileOwners(t *testing.T, content string, resources ...source.Resource) (*rules.Target, []rulefile.FieldError) {
	t.Helper()
	f, err := rules.Parse("rules.yaml", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	all := append([]source.Resource{rulestest.Pods}, resources...)
	set, unresolved, err := rules.Compile("rules.yaml", f, func(name string) (source.Resource, error) {
		for _, r := range all {
			if r.GVR.Resource == name || r.GVR.GroupResource().String() == name {
				return r, nil
			}
		}
		return source.Resource{}, fmt.Errorf("the server does not serve %q", name)
	})
	if err != nil {
		t.Fatal(err)
	}
	return set.Targets[rulestest.Pods.GVR], unresolved
}

// ownedBy returns metadata named name with uid, owned (controller: true)
// by owner, an object of res, when owner is not nil.
func ownedBy(name, uid string, labels map[string]string, owner *metav1.ObjectMeta, res source.Resource) *metav1.ObjectMeta {
	m := &metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(uid), Labels: labels}
	if owner != nil {
		yes := true
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: res.GVR.GroupVersion().String(), Kind: res.Kind, Name: owner.Name, UID: owner.UID, Controller: &yes}}
	}
	return m
}

// ownersLookup finds owners among objs, by source and name.
type ownersLookup map[*source.Source][]*metav1.ObjectMeta

func (l ownersLookup) Find(src *source.Source, ns, name string) (metav1.Object, bool) {
	for _, o := range l[src] {
		if o.Namespace == ns && o.Name == name {
			return o, true
		}
	}
	return nil, false
}

// TestEvaluateFromOwner checks the values read from a Pod's owners: the
// root or a named hop, a chain ended by an owner not walked through, an
// owner replaced by another of its name, an orphan, and what explain
// says of each.
func TestEvaluateFromOwner(t *testing.T) {
	deploy := ownedBy("web", "d-1", map[string]string{"team": "payments", "tier": "front"}, nil, source.Resource{})
	rs := ownedBy("web-6d5f8", "rs-1", map[string]string{"team": "rs-team", "tier": "rs"}, deploy, rulestest.Deployments)
	rollout := ownedBy("canary", "ro-1", map[string]string{"team": "rollers"}, nil, source.Resource{})
	rsOfRollout := ownedBy("canary-7f", "rs-2", nil, rollout, rollouts)
	look := ownersLookup{
		source.OwnerOf(rulestest.Deployments): {deploy},
		source.OwnerOf(replicaSets):           {rs, rsOfRollout},
		source.OwnerOf(rollouts):              {rollout},
	}
	const rootRules = "rules:\n- name: team\n  resources: [pods]\n  labels:\n    team: {fromOwner: {label: team}, default: none}\n    tier: {fromOwner: {label: tier, owner: replicasets.apps}}\n"
	stale := ownedBy("web-6d5f8", "rs-old", nil, deploy, rulestest.Deployments)
	for _, tc := range []struct {
		name                string
		rules               string
		pod                 *metav1.ObjectMeta
		want                map[string]string
		wantInput, wantWhy  string
		extraOwnerResources []source.Resource
	}{
		{name: "the root through a ReplicaSet", rules: rootRules, pod: ownedBy("web-1", "p-1", nil, rs, replicaSets),
			want: map[string]string{"team": "payments", "tier": "rs"}, wantInput: `label "team" of Deployment "web", through ReplicaSet "web-6d5f8"`},
		{name: "an orphan gets the default", rules: rootRules, pod: ownedBy("bare", "p-2", nil, nil, source.Resource{}),
			want: map[string]string{"team": "none"}, wantWhy: "has no controller owner of kind ReplicaSet, Deployment"},
		{name: "an owner of another UID is not the owner", rules: rootRules, pod: ownedBy("old", "p-3", nil, stale, replicaSets),
			want: map[string]string{"team": "none"}, wantWhy: `ReplicaSet "web-6d5f8" is not known`},
		{name: "a Rollout not walked through ends the chain", rules: rootRules, pod: ownedBy("c-1", "p-4", nil, rsOfRollout, replicaSets),
			want: map[string]string{"team": "none"}, wantWhy: `ReplicaSet "canary-7f" has no label "team"`, extraOwnerResources: []source.Resource{rollouts}},
		{name: "a Rollout walked through", pod: ownedBy("c-1", "p-4", nil, rsOfRollout, replicaSets),
			rules: "rules:\n- name: team\n  resources: [pods]\n  labels:\n    team: {fromOwner: {label: team, through: [replicasets.apps, rollouts.argoproj.io]}, default: none}\n",
			want:  map[string]string{"team": "rollers"}, wantInput: `label "team" of Rollout "canary", through ReplicaSet "canary-7f"`, extraOwnerResources: []source.Resource{rollouts}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, unresolved := compileOwners(t, tc.rules, append([]source.Resource{replicaSets, rulestest.Deployments}, tc.extraOwnerResources...)...)
			for _, u := range unresolved {
				if !strings.Contains(u.Message, "does not serve") {
					t.Errorf("unresolved %v", u)
				}
			}
			ev := tg.Evaluate(tc.pod, look)
			if !reflect.DeepEqual(ev.Desired.Labels, tc.want) {
				t.Errorf("labels = %v, want %v (problems %q)", ev.Desired.Labels, tc.want, ev.Problems)
			}
			v := tg.Explain(tc.pod, look)
			i := slices.IndexFunc(v[0].Wants, func(w verdict.Want) bool { return w.Key == "team" })
			if i < 0 || v[0].Wants[i].Input != tc.wantInput || !strings.Contains(v[0].Wants[i].Defaulted, tc.wantWhy) {
				t.Errorf("Explain() wants %+v; want team read from %q, or defaulted as %q", v[0].Wants, tc.wantInput, tc.wantWhy)
			}
		})
	}
}

// TestFromOwnerNeeds checks what a rule reading owners needs: the owners
// kept in a metadata cache, a source per owner resource walked through
// (one source per resource, whatever the rules), and which changes of an
// owner matter.
func TestFromOwnerNeeds(t *testing.T) {
	tg, unresolved := compileOwners(t, "rules:\n- name: team\n  resources: [pods]\n  labels:\n    team: {fromOwner: {label: team}}\n", replicaSets, rulestest.Deployments)
	if len(unresolved) != 4 { // statefulsets, daemonsets, jobs and cronjobs are not served here
		t.Errorf("unresolved = %v, want the four default owner resources not served", unresolved)
	}
	if p := tg.Projection(); p.Whole || !p.Owners || !p.Labels.Has("team") {
		t.Errorf("Projection() = %+v, want metadata with owners and the label team", p)
	}
	want := []*source.Source{source.Namespace, source.OwnerOf(rulestest.Deployments), source.OwnerOf(replicaSets)}
	if got := tg.Sources(); !slices.Equal(got, want) {
		t.Errorf("Sources() = %v, want the namespace and one source per owner resource %v", got, want)
	}
	if source.OwnerOf(replicaSets) != source.OwnerOf(replicaSets) {
		t.Error("OwnerOf returned two sources for one resource")
	}
	owner := func(team string, uid types.UID) metav1.Object {
		m := &metav1.ObjectMeta{Name: "web-6d5f8", Labels: map[string]string{"team": team}}
		if uid != "" {
			yes := true
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: uid, Controller: &yes}}
		}
		return m
	}
	rsSource := source.OwnerOf(replicaSets)
	for _, tc := range []struct {
		name     string
		old, new metav1.Object
		want     bool
	}{
		{"the label read", owner("a", "d-1"), owner("b", "d-1"), true},
		{"adopted by another owner", owner("a", "d-1"), owner("a", "d-2"), true},
		{"orphaned", owner("a", "d-1"), owner("a", ""), true},
		{"nothing read", owner("a", "d-1"), owner("a", "d-1"), false},
	} {
		if got := tg.SourceChangeMatters(rsSource, tc.old, tc.new); got != tc.want {
			t.Errorf("%s: SourceChangeMatters() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFromOwnerKeepsSelectorLabels checks that no rule changes a label
// that a Pod's owner selects it by: refused at load for the labels
// Kubernetes' own workload controllers use, left unchanged, with a
// problem said, for those only the owner's selector tells.
func TestFromOwnerKeepsSelectorLabels(t *testing.T) {
	for _, in := range []string{"labels: {pod-template-hash: x}", "removeLabels: [controller-uid]", "labels: {controller-revision-hash: {fromOwner: {label: x}}}"} {
		_, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: [pods]\n  "+in+"\n"))
		if err == nil || !strings.Contains(err.Error(), "would orphan a Pod or have it replaced") {
			t.Errorf("%s: error = %v, want a refusal", in, err)
		}
	}
	if _, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: [replicasets]\n  labels: {pod-template-hash: x}\n")); err != nil {
		t.Errorf("a rule on ReplicaSets: %v, want no refusal", err)
	}
	rs := ownedBy("web-6d5f8", "rs-1", map[string]string{"team": "web-team", "app": "other"}, nil, source.Resource{})
	cached := &selecting{ObjectMeta: rs, selector: map[string]any{"matchLabels": map[string]any{"app": "web"},
		"matchExpressions": []any{map[string]any{"key": "tier", "operator": "Exists"}}}}
	look := ownersLookupOf{source.OwnerOf(replicaSets): cached}
	tg, _ := compileOwners(t, `rules:
- name: copy
  resources: [pods]
  labels:
    team: {fromOwner: {label: team}}
    app: {fromOwner: {label: app}}
    tier: front
`, replicaSets, rulestest.Deployments)
	pod := ownedBy("web-1", "p-1", map[string]string{"app": "web"}, rs, replicaSets)
	ev := tg.Evaluate(pod, look)
	if want := map[string]string{"team": "web-team"}; !reflect.DeepEqual(ev.Desired.Labels, want) {
		t.Errorf("labels = %v, want %v: app and tier are the ReplicaSet's selector's", ev.Desired.Labels, want)
	}
	if got := strings.Join(ev.Problems, "\n"); !strings.Contains(got, `label "app" is not changed: ReplicaSet "web-6d5f8" selects the object by it`) ||
		!strings.Contains(got, `label "tier" is not changed`) {
		t.Errorf("Problems = %q, want app and tier named", ev.Problems)
	}
}

// selecting is an owner as its cache keeps it: metadata, and its
// spec.selector among its fields.
type selecting struct {
	*metav1.ObjectMeta
	selector map[string]any
}

func (s *selecting) UnstructuredContent() map[string]any {
	return map[string]any{"spec": map[string]any{"selector": s.selector}}
}

// ownersLookupOf finds the one owner of each source.
type ownersLookupOf map[*source.Source]*selecting

func (l ownersLookupOf) Find(src *source.Source, ns, name string) (metav1.Object, bool) {
	o, ok := l[src]
	if !ok || o.Namespace != ns || o.Name != name {
		return nil, false
	}
	return o, true
}
