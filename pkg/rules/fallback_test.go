package rules_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/verdict"
)

// TestParseFallback checks a default given as another value form: how it
// is stored, and the chains refused, each at its line.
func TestParseFallback(t *testing.T) {
	team := rulefile.NamespaceKey{Kind: "label", Key: "team"}
	tests := []struct {
		name string
		in   string // the labels mapping of a rule on pods
		want rulefile.Metadata
		errs []string
	}{
		{name: "owner, else namespace, else a literal", in: "{team: {fromOwner: {label: team}, default: {fromNamespace: {label: team}, default: none}}}",
			want: rulefile.Metadata{Fallback: map[string]*rulefile.Metadata{"team": {
				FromNamespace: map[string]rulefile.NamespaceKey{"team": team}, Default: map[string]string{"team": "none"}}}}},
		{name: "ifInvalid per level", in: "{team: {jsonPath: '{.spec.nodeName}', default: {fromNamespace: {label: team}, ifInvalid: truncate}}}",
			want: rulefile.Metadata{From: map[string]string{"team": "{.spec.nodeName}"}, Fallback: map[string]*rulefile.Metadata{"team": {
				FromNamespace: map[string]rulefile.NamespaceKey{"team": team}, IfInvalid: map[string]string{"team": "truncate"}}}}},
		{name: "{value: …} is a literal", in: "{team: {fromNamespace: {label: team}, default: {value: none}}}",
			want: rulefile.Metadata{FromNamespace: map[string]rulefile.NamespaceKey{"team": team}, Default: map[string]string{"team": "none"}}},
		{name: "too deep", in: "{team: {fromNamespace: {label: a}, default: {fromNamespace: {label: b}, default: {fromNamespace: {label: c},\n" +
			"    default: {fromNamespace: {label: d}, default: {fromNamespace: {label: e},\n    default: {fromNamespace: {label: f}}}}}}}}", errs: []string{
			`rules.yaml:6: rules[0].labels.team.default.default.default.default.default: a default chain holds at most 4 value forms after the key's own; end it with a literal default`}},
		{name: "cel is no default", in: "{team: {fromNamespace: {label: team}, default: {cel: 'object.metadata.name'}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.default: a cel expression is the key's value or none; write its fallbacks in CEL (has(…) ? … : …)`}},
		{name: "ifAbsent goes first", in: "{team: {fromNamespace: {label: team}, default: {fromNode: {label: team}, ifAbsent: true}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.default: ifAbsent says when the key is set, so it goes next to the key's first value form, not in a default`}},
		{name: "a level's errors are the level's", in: "{team: {fromNamespace: {label: team},\n    default: {fromNamespace: {label: x}, default: 'a b'}}}", errs: []string{
			`rules.yaml:5: rules[0].labels.team.default.default: invalid label value "a b": …`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: [pods]\n  labels: "+tc.in+"\n"))
			if tc.errs != nil {
				checkLines(t, err, tc.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := f.Rules[0].Labels
			got.FromRelated, tc.want.FromRelated = nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestEvaluateFallback checks a chain, the owner's label, else the
// namespace's, else a literal: which level sets the value, what explain
// says of the levels before it, and that a rule reading the chain reads
// every source of it.
func TestEvaluateFallback(t *testing.T) {
	const rulesYAML = "rules:\n- name: team\n  resources: [pods]\n  labels:\n" +
		"    team: {fromOwner: {label: team}, default: {fromNamespace: {label: team}, default: unassigned}}\n" +
		"    tier: {fromOwner: {label: tier}, default: {fromNamespace: {label: tier}, ifInvalid: truncate}}\n"
	tg, _ := compileOwners(t, rulesYAML, replicaSets, rulestest.Deployments)
	deploy := ownedBy("web", "d-1", map[string]string{"team": "payments"}, nil, source.Resource{})
	badTeam := ownedBy("web", "d-1", map[string]string{"team": "no spaces allowed"}, nil, source.Resource{})
	long := strings.Repeat("x", 70)
	tests := []struct {
		name      string
		owner     *metav1.ObjectMeta // the Pod's owner, a Deployment
		ns        map[string]string  // the namespace's labels; nil: no namespace known
		want      map[string]string
		why       string // in explain's Defaulted of team
		problems  int
		unsetTeam bool
	}{
		{name: "the owner's", owner: deploy, ns: map[string]string{"team": "ns-team", "tier": "web"},
			want: map[string]string{"team": "payments", "tier": "web"}},
		{name: "no owner: the namespace's", ns: map[string]string{"team": "ns-team", "tier": "web"},
			want: map[string]string{"team": "ns-team", "tier": "web"},
			why:  `has no controller owner of kind ReplicaSet, Deployment; set by the default fromNamespace label "team"`},
		{name: "neither: the literal", ns: map[string]string{},
			want: map[string]string{"team": "unassigned"}, problems: 1,
			why: `has no controller owner of kind ReplicaSet, Deployment; fromNamespace: namespace "shop" has no label "team"`},
		{name: "an invalid owner value falls through", owner: badTeam, ns: map[string]string{"team": "ns-team"},
			want: map[string]string{"team": "ns-team"}, problems: 1, // tier's
			why: `is not valid`},
		{name: "a later level's ifInvalid", ns: map[string]string{"team": "t", "tier": long},
			want: map[string]string{"team": "t", "tier": long[:63]}, why: `set by the default fromNamespace label "team"`},
		{name: "no namespace known", want: map[string]string{"team": "unassigned"}, problems: 1,
			why: `fromNamespace label "team"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			look := ownersLookup{source.OwnerOf(rulestest.Deployments): {deploy}}
			var owner *metav1.ObjectMeta
			if tc.owner != nil {
				look[source.OwnerOf(rulestest.Deployments)] = []*metav1.ObjectMeta{tc.owner}
				owner = tc.owner
			}
			if tc.ns != nil {
				look[source.Namespace] = []*metav1.ObjectMeta{{Name: "shop", Labels: tc.ns}}
			}
			pod := ownedBy("web-1", "p-1", nil, owner, rulestest.Deployments)
			ev := tg.Evaluate(pod, look)
			if !reflect.DeepEqual(ev.Desired.Labels, tc.want) {
				t.Errorf("labels = %v, want %v (problems %q)", ev.Desired.Labels, tc.want, ev.Problems)
			}
			if len(ev.Problems) != tc.problems {
				t.Errorf("problems %q, want %d", ev.Problems, tc.problems)
			}
			v := tg.Explain(pod, look)
			i := slices.IndexFunc(v[0].Wants, func(w verdict.Want) bool { return w.Key == "team" })
			if i < 0 || (tc.why == "") != (v[0].Wants[i].Defaulted == "") || !strings.Contains(v[0].Wants[i].Defaulted, tc.why) {
				t.Errorf("Explain() wants %+v; want team defaulted as %q", v[0].Wants, tc.why)
			}
		})
	}
	if !tg.Rules[0].ReadsNamespace() {
		t.Error("ReadsNamespace() = false for a rule whose default reads the namespace")
	}
}

// TestFallbackNeeds checks that a source read only by a default is read
// as if it were the key's own value: its sources, the owners kept in a
// metadata cache, and the changes of an owner that matter.
func TestFallbackNeeds(t *testing.T) {
	tg, _ := compileOwners(t, "rules:\n- name: team\n  resources: [pods]\n  labels:\n"+
		"    team: {jsonPath: '{.metadata.annotations.team}', default: {fromOwner: {label: team}, default: none}}\n", replicaSets, rulestest.Deployments)
	if p := tg.Projection(); !p.Owners || !p.Labels.Has("team") {
		t.Errorf("Projection() = %+v, want owners and the label team", p)
	}
	want := []*source.Source{source.Namespace, source.OwnerOf(rulestest.Deployments), source.OwnerOf(replicaSets)}
	if got := tg.Sources(); !slices.Equal(got, want) {
		t.Errorf("Sources() = %v, want %v", got, want)
	}
	old := &metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "a"}}
	relabelled := &metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "b"}}
	if !tg.SourceChangeMatters(source.OwnerOf(rulestest.Deployments), old, relabelled) {
		t.Error("SourceChangeMatters() = false for the owner's label a default reads")
	}
}

// TestFallbackHeldOnError checks that a CEL value that fails ends its
// chain as without one: the key is held, and the chain's literal is what
// an object lacking it gets, its later forms not read.
func TestFallbackHeldOnError(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- name: r\n  resources: [configmaps]\n  annotations:\n"+
		"    owner: {cel: 'object.data.owner', default: {fromNamespace: {label: team}, default: none}}\n", rulestest.ConfigMaps)
	target := set.Targets[rulestest.ConfigMaps.GVR]
	ns := source.Namespaces(func(string) (metav1.Object, bool) {
		return &metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"team": "a"}}, true
	})
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "ns"}}}
	e := target.Evaluate(obj, ns)
	if got := e.Desired.Annotations["owner"]; got != "none" {
		t.Errorf("owner = %q, want the chain's literal", got)
	}
	if held := e.Held("annotation"); !slices.Equal(held, []string{"owner"}) {
		t.Errorf("Held() = %v, want owner", held)
	}
}
