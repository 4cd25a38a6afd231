package admission

import (
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// teamDefaults is the ConfigMap name of namespace "ns", with these labels
// and data.
func teamDefaults(name string, lbls, data map[string]string) *corev1.ConfigMap {
	return cm("ns", name, nil, lbls, data)
}

// paramTests are the values read from a ConfigMap named in the object's
// namespace, which a policy reads as its params: one policy per
// ConfigMap, skipped where it is missing; a missing key is the default,
// or sets nothing; a cluster-scoped object, which has no namespace, is
// left to the controller.
var paramTests = []translateTest{
	{name: "values read from ConfigMaps named in the object's namespace",
		rules: "rules:\n- name: team\n  resources: [pods]\n" +
			"  annotations: {a: '1', owner: {fromRef: {resource: configmaps, name: team-defaults, data: owner}, default: nobody}," +
			" team: {fromRef: {resource: configmaps, name: team-defaults, label: team}}}\n" +
			"  labels: {tier: {fromRef: {resource: configmaps, name: team-defaults, data: tier}}, env: {fromRef: {resource: configmaps, name: other, annotation: env}}}\n",
		policies: []string{"team", "team", "team"}, // its own, then configmaps.other and configmaps.team-defaults
		requests: []request{
			{name: "read from both", gvr: pods, obj: pod("ns", "p"), configMaps: []*corev1.ConfigMap{
				teamDefaults("team-defaults", map[string]string{"team": "t"}, map[string]string{"owner": "alice", "tier": "web"}),
				cm("ns", "other", map[string]string{"env": "prod"}, nil, nil)},
				wantAnns:   map[string]string{"a": "1", "owner": "alice", "team": "t", podMarker: "a,label:env,label:tier,owner,team"},
				wantLabels: map[string]string{"tier": "web", "env": "prod"}},
			{name: "keys the ConfigMap lacks: the default, or nothing; no ConfigMap other: its policy skipped", gvr: pods, obj: pod("ns", "p"),
				configMaps: []*corev1.ConfigMap{teamDefaults("team-defaults", nil, nil)},
				wantAnns:   map[string]string{"a": "1", "owner": "nobody", podMarker: "a,owner"}},
			{name: "no valid label value: nothing, as the controller", gvr: pods, obj: pod("ns", "p"),
				configMaps: []*corev1.ConfigMap{teamDefaults("team-defaults", nil, map[string]string{"owner": "bob", "tier": "not valid"})},
				wantAnns:   map[string]string{"a": "1", "owner": "bob", podMarker: "a,owner"}},
			{name: "no ConfigMap: the policy is skipped, the controller sets the default", gvr: pods, obj: pod("ns", "p"),
				wantAnns: map[string]string{"a": "1", podMarker: "a"}, controller: []string{"owner"}},
			{name: "a value the creator set is kept, not listed", gvr: pods, obj: withAnnotations(pod("ns", "p"), map[string]string{"owner": "alice"}),
				configMaps: []*corev1.ConfigMap{teamDefaults("team-defaults", nil, map[string]string{"owner": "alice"})},
				wantAnns:   map[string]string{"a": "1", "owner": "alice", podMarker: "a"}},
		}},
	{name: "rules that read ConfigMaps: file order decides",
		rules: "rules:\n- {name: first, resources: [pods], selector: app=web, annotations: {owner: {fromRef: {resource: configmaps, name: team-defaults, data: owner}}}}\n" +
			"- {name: literal, resources: [pods], names: [lit-*], annotations: {owner: x, b: '2'}}\n" +
			"- {name: same, resources: [pods], annotations: {owner: {fromRef: {resource: configmaps, name: team-defaults, data: fallback}}}}\n",
		policies: []string{"first", "literal", "same"},
		notes: []string{
			`rule literal: annotations.owner: left to the controller: rule first, earlier in the file, may set it from ConfigMap "team-defaults", which this policy does not read`,
			"rule literal: names: objects created with generateName (a ReplicaSet's Pods, say) have no name at admission; the controller annotates them after creation",
		},
		requests: []request{
			{name: "the first rule's", gvr: pods, obj: withLabels(pod("ns", "p"), web),
				configMaps: []*corev1.ConfigMap{teamDefaults("team-defaults", nil, map[string]string{"owner": "alice", "fallback": "bob"})},
				wantAnns:   map[string]string{"owner": "alice", podMarker: "owner"}, wantLabels: web},
			{name: "the same ConfigMap, read by a later rule", gvr: pods, obj: withLabels(pod("ns", "p"), web),
				configMaps: []*corev1.ConfigMap{teamDefaults("team-defaults", nil, map[string]string{"fallback": "bob"})},
				wantAnns:   map[string]string{"owner": "bob", podMarker: "owner"}, wantLabels: web},
			{name: "the literal, by the controller", gvr: pods, obj: pod("ns", "lit-1"),
				configMaps: []*corev1.ConfigMap{teamDefaults("team-defaults", nil, map[string]string{"owner": "alice", "fallback": "bob"})},
				wantAnns:   map[string]string{"b": "2", podMarker: "b"}, controller: []string{"owner"}},
		}},
	{name: "a ConfigMap named by a field is the controller's",
		rules:    "rules:\n- {name: team, resources: [pods], labels: {a: '1', team: {fromRef: {resource: configmaps, field: spec.serviceAccountName, names: [defaults], data: team}}}}\n",
		policies: []string{"team"},
		notes:    []string{`rule team: labels.team: a value read from the object referred to is set by the controller only: admission policies read the object and its namespace only, not the objects it refers to (but a ConfigMap given by name:, in the object's namespace, which the policy reads as its params); the controller sets it`},
	},
}

// TestTranslateParamRef checks the policy that reads a ConfigMap: its
// paramKind, its binding's paramRef (no namespace: the admitted object's;
// a missing ConfigMap skips the policy), its CEL reading params, and
// that it matches namespaced objects only. A rule whose resources are all
// cluster-scoped (which the rules file refuses: it is the controller's
// guard) leaves the key to the controller with a note; one with some
// cluster-scoped resources notes that these are left to it.
func TestTranslateParamRef(t *testing.T) {
	const rules = "rules:\n- {name: team, resources: [pods, deployments], annotations: {owner: {fromRef: {resource: configmaps, name: team-defaults, data: owner}, default: nobody}}}\n"
	set := rulestest.Compile(t, rules, served...)
	policies, notes, err := Translate(set, options())
	if err != nil || len(notes) > 0 || len(policies) != 1 {
		t.Fatalf("Translate() = %d policies, notes %v, error %v; want 1 policy, no note", len(policies), notes, err)
	}
	p := policies[0]
	if want := (admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}); p.Policy.Spec.ParamKind == nil || *p.Policy.Spec.ParamKind != want {
		t.Errorf("paramKind %v, want %v", p.Policy.Spec.ParamKind, want)
	}
	ref := p.Binding.Spec.ParamRef
	if ref == nil || ref.Name != "team-defaults" || ref.Namespace != "" || ref.Selector != nil ||
		ref.ParameterNotFoundAction == nil || *ref.ParameterNotFoundAction != admissionregistrationv1.AllowAction {
		t.Errorf("paramRef %s, want team-defaults in the object's namespace, Allow where it is missing", testutil.MustJSON(ref))
	}
	for _, r := range p.Policy.Spec.MatchConstraints.ResourceRules {
		if *r.Scope != admissionregistrationv1.NamespacedScope {
			t.Errorf("resource rule %v: scope %s, want Namespaced", r.Resources, *r.Scope)
		}
	}
	if v := p.Policy.Spec.Variables[0].Expression; !strings.Contains(v, `params.?data[?"owner"]`) {
		t.Errorf("the value is not read from params: %s", v)
	}

	set.Targets[deployments].Namespaced = false
	policies, notes, _ = Translate(set, options())
	if got := len(policies[0].Policy.Spec.MatchConstraints.ResourceRules); got != 1 {
		t.Errorf("with deployments cluster-scoped: %d resource rules, want pods only", got)
	}
	want := []string{`rule team: annotations.owner: on deployments.apps: read from ConfigMap "team-defaults" in the object's namespace, which a cluster-scoped object lacks; the controller sets it`}
	if got := fmt.Sprint(notes); got != fmt.Sprint(want) {
		t.Errorf("notes %s\nwant  %s", got, want)
	}
	set.Targets[pods].Namespaced = false
	policies, notes, _ = Translate(set, options())
	want = []string{
		`rule team: annotations.owner: read from ConfigMap "team-defaults" in the object's namespace, which a cluster-scoped object lacks; the controller sets it`,
		"rule team: nothing is set at admission; the controller enforces the whole rule",
	}
	if got := fmt.Sprint(notes); len(policies) > 0 || got != fmt.Sprint(want) {
		t.Errorf("all cluster-scoped: %d policies, notes %s\nwant none, %s", len(policies), got, want)
	}
}
