package admission

import (
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// TestTranslateDefaults checks that a default next to a value read from
// the object is set at admission where the source is missing, as the
// controller sets it, and that a later rule no longer takes the key.
func TestTranslateDefaults(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n"+
		"- {name: owner, resources: [configmaps], annotations: {owner: {jsonPath: '{.data.owner}', default: unknown}},"+
		" labels: {tier: {jsonPath: '{.data.tier}', default: none}}}\n"+
		"- {name: later, resources: [configmaps], namespaces: ['n*'], annotations: {owner: nobody}}\n", served...)
	policies, notes, err := Translate(set, options())
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) > 0 {
		t.Errorf("notes %v, want none", notes)
	}
	var compiledPolicies []*compiled
	for _, p := range policies {
		compiledPolicies = append(compiledPolicies, compilePolicy(t, p.Policy))
	}
	for _, rq := range []request{
		{name: "read", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"owner": "ann", "tier": "web"}),
			wantAnns: map[string]string{"owner": "ann", marker: "label:tier,owner"}, wantLabels: map[string]string{"tier": "web"}},
		{name: "missing: the defaults", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil),
			wantAnns: map[string]string{"owner": "unknown", marker: "label:tier,owner"}, wantLabels: map[string]string{"tier": "none"}},
		{name: "no valid label value: the default", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"owner": "ann", "tier": "not valid"}),
			wantAnns: map[string]string{"owner": "ann", marker: "label:tier,owner"}, wantLabels: map[string]string{"tier": "none"}},
	} {
		t.Run(rq.name, func(t *testing.T) { checkRequest(t, set, compiledPolicies, rq) })
	}
}
