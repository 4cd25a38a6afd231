package admission

import (
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// TestTranslateOptOutLocked checks that the policy of a rule with
// allowOptOut: false applies to objects that opt out, and to objects in
// namespaces that do, while other rules' policies leave them alone.
func TestTranslateOptOutLocked(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n"+
		"- {name: team, resources: [configmaps], annotations: {team: a, psa: open}}\n"+
		"- {name: psa, resources: [configmaps], allowOptOut: false, namespaces: ['n*'], labels: {psa: baseline}, annotations: {psa: locked}}\n", served...)
	policies, _, err := Translate(set, options())
	if err != nil {
		t.Fatal(err)
	}
	var compiledPolicies []*compiled
	for _, p := range policies {
		compiledPolicies = append(compiledPolicies, compilePolicy(t, p.Policy))
	}
	ignore := map[string]string{rulefile.IgnoreAnnotation: "true"}
	for _, rq := range []request{
		{name: "not opted out: both", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil),
			wantAnns: map[string]string{"team": "a", "psa": "open", marker: "label:psa,psa,team"}, wantLabels: map[string]string{"psa": "baseline"}},
		{name: "opted out: the locked rule only", gvr: configMaps, obj: cm("ns", "x", ignore, nil, nil),
			wantAnns: map[string]string{rulefile.IgnoreAnnotation: "true", "psa": "locked", marker: "label:psa,psa"}, wantLabels: map[string]string{"psa": "baseline"}},
		{name: "its namespace opted out: the locked rule only", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil), nsIgnored: true,
			wantAnns: map[string]string{"psa": "locked", marker: "label:psa,psa"}, wantLabels: map[string]string{"psa": "baseline"}},
	} {
		t.Run(rq.name, func(t *testing.T) { checkRequest(t, set, compiledPolicies, rq) })
	}
}
