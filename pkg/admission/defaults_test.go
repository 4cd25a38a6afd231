package admission

import (
	"fmt"
	"strings"
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

// TestTranslateIfInvalid checks that a label value read that ifInvalid
// makes valid is set at admission where it is valid, and its default where
// its source is missing, as the controller sets them; where it is no valid
// label value neither is set, and the note says that the controller makes
// it one after creation.
func TestTranslateIfInvalid(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n"+
		"- {name: tier, resources: [configmaps], labels: {tier: {jsonPath: '{.data.tier}', default: none, ifInvalid: truncate},"+
		" id: {cel: \"has(object.data) && 'id' in object.data ? object.data.id : 1\", ifInvalid: hash}}}\n", served...)
	policies, notes, err := Translate(set, options())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"rule tier: labels.id: set where the value read is a valid label value; where it is not, the controller makes it one (ifInvalid: hash) after creation",
		"rule tier: labels.tier: set where the value read is a valid label value; where it is not, the controller makes it one (ifInvalid: truncate) after creation",
	}
	if got := fmt.Sprint(notes); got != fmt.Sprint(want) {
		t.Errorf("notes %s\nwant  %s", got, want)
	}
	var compiledPolicies []*compiled
	for _, p := range policies {
		compiledPolicies = append(compiledPolicies, compilePolicy(t, p.Policy))
	}
	long := strings.Repeat("a", 91)
	for _, rq := range []request{
		{name: "valid", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"tier": "web", "id": "i"}),
			wantAnns: map[string]string{marker: "label:id,label:tier"}, wantLabels: map[string]string{"tier": "web", "id": "i"}},
		{name: "missing: the default", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil),
			wantAnns: map[string]string{marker: "label:tier"}, wantLabels: map[string]string{"tier": "none"}},
		{name: "no valid label value: left to the controller", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"tier": long, "id": long}),
			controllerLabels: []string{"id", "tier"}},
	} {
		t.Run(rq.name, func(t *testing.T) { checkRequest(t, set, compiledPolicies, rq) })
	}
}

// TestTranslateFallback checks that a key whose default is another value
// form is left to the controller, with a note, while a literal default
// next to it is still set at admission.
func TestTranslateFallback(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n"+
		"- {name: owner, resources: [configmaps], annotations: {owner: {jsonPath: '{.data.owner}', default: {fromNamespace: {label: owner}, default: unknown}},"+
		" tier: {jsonPath: '{.data.tier}', default: none}}}\n", served...)
	policies, notes, err := Translate(set, options())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"rule owner: annotations.owner: its default is read from another source, which the controller follows; the controller sets it"}
	if got := fmt.Sprint(notes); got != fmt.Sprint(want) {
		t.Errorf("notes %s\nwant  %s", got, want)
	}
	var compiledPolicies []*compiled
	for _, p := range policies {
		compiledPolicies = append(compiledPolicies, compilePolicy(t, p.Policy))
	}
	for _, rq := range []request{
		{name: "read", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"owner": "ann"}),
			wantAnns: map[string]string{"tier": "none", marker: "tier"}, controller: []string{"owner"}},
		{name: "missing: the namespace's, by the controller", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil), ns: map[string]string{"owner": "ns-owner"},
			wantAnns: map[string]string{"tier": "none", marker: "tier"}, controller: []string{"owner"}},
	} {
		t.Run(rq.name, func(t *testing.T) { checkRequest(t, set, compiledPolicies, rq) })
	}
}
