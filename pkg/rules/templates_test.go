package rules_test

import (
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// TestParsePodTemplates checks which rules may ask for their keys in pod
// templates: rules for Pods alone, in enforce mode, selecting Pods by what
// a template has of them; each refusal at its line.
func TestParsePodTemplates(t *testing.T) {
	tests := []struct {
		name, rule string // the rule's fields but its name
		err        string // "" when accepted
	}{
		{name: "pods", rule: "resources: [pods]\n  selector: app=web\n  namespaces: [shop-*]\n  podTemplates: true\n  labels: {team: a}"},
		{name: "po, by short name", rule: "resources: [po]\n  podTemplates: true\n  labels: {team: a}"},
		{name: "false asks nothing", rule: "resources: [deployments]\n  podTemplates: false\n  labels: {team: a}"},
		{name: "other resources", rule: "resources: [pods, deployments]\n  podTemplates: true\n  labels: {team: a}",
			err: `rules.yaml:4: rules[0].podTemplates: pod templates are for a rule on pods, but the rule also names "deployments" (resources[1]): give it a rule of its own`},
		{name: "audit", rule: "resources: [pods]\n  mode: audit\n  podTemplates: true\n  labels: {team: a}",
			err: `rules.yaml:5: rules[0].podTemplates: audit mode writes nothing, in pod templates neither`},
		{name: "names", rule: "resources: [pods]\n  names: [web-*]\n  podTemplates: true\n  labels: {team: a}",
			err: `rules.yaml:5: rules[0].podTemplates: a template has no Pod name (a workload's Pods are named when created), so names cannot select it: select by selector or namespace`},
		{name: "when", rule: "resources: [pods]\n  when: has(object.spec.volumes)\n  podTemplates: true\n  labels: {team: a}"},
		{name: "not a boolean", rule: "resources: [pods]\n  podTemplates: yes-please\n  labels: {team: a}",
			err: `rules.yaml:4: rules[0].podTemplates: …`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  "+tc.rule+"\n"))
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkLines(t, err, []string{tc.err})
		})
	}
}
