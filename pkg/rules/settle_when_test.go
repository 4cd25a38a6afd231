package rules_test

import (
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// TestCompileWhenUnsettled checks that Compile refuses a when condition on
// a key that a rule sets on the same resource named another way, which
// Parse cannot tell is one resource, as it does selector cycles; and that
// rules on different resources are accepted.
func TestCompileWhenUnsettled(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // nil: accepted
	}{
		{"another rule sets the key, through a short name", "rules:\n" +
			"- {name: tag, resources: [deploy], annotations: {example.com/tier: web}}\n" +
			"- {name: big, resources: [deployments], when: \"object.metadata.?annotations[?'example.com/tier'].orValue('') == 'web'\", labels: {big: 'true'}}\n",
			[]string{`rules.yaml: rules[1].when: "object.metadata.?annotations[?'example.com/tier'].orValue('') == 'web'" reads annotation/example.com/tier, ` +
				`which rules[0] (tag) sets: its write would decide whether the rule selects the object, so the controller could undo and redo its own writes without end; ` +
				`leave the key out of the condition; to set it only where it is absent, give it as {value: "…", ifAbsent: true}`}},
		{"another rule sets the label from the object, through a long name", "rules:\n" +
			"- {name: big, resources: [deploy], when: \"!has(object.metadata.labels.team)\", annotations: {a: b}}\n" +
			"- {name: team, resources: [deployments.v1.apps], labels: {team: {cel: 'object.metadata.namespace'}}}\n",
			[]string{`rules.yaml: rules[0].when: "!has(object.metadata.labels.team)" reads label/team, which rules[1] (team) sets: …`}},
		{"reported once for two resources", "rules:\n" +
			"- {name: tag, resources: [pods, deploy], labels: {tier: web}}\n" +
			"- {name: big, resources: [po, deployments], when: \"'tier' in object.metadata.labels\", annotations: {a: b}}\n",
			[]string{`rules.yaml: rules[1].when: "'tier' in object.metadata.labels" reads label/tier, which rules[0] (tag) sets: …`}},
		{"an audit rule writes nothing", "rules:\n" +
			"- {name: tag, resources: [deploy], mode: audit, labels: {tier: web}}\n" +
			"- {name: big, resources: [deployments], when: \"'tier' in object.metadata.labels\", annotations: {a: b}}\n", nil},
		{"different resources", "rules:\n" +
			"- {name: tag, resources: [po], labels: {tier: web}}\n" +
			"- {name: big, resources: [deploy], when: \"'tier' in object.metadata.labels\", annotations: {a: b}}\n", nil},
		{"a condition on another key", "rules:\n" +
			"- {name: tag, resources: [deploy], labels: {tier: web}}\n" +
			"- {name: big, resources: [deployments], when: \"'app' in object.metadata.labels\", annotations: {a: b}}\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			set, _, err := rules.Compile("rules.yaml", f, fakeResolve)
			if tc.want == nil {
				if err != nil || set == nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			checkLines(t, err, tc.want)
		})
	}
}

// TestParseWhenUnsettledOnce checks that a condition read that several
// resources both name is refused once, not once per resource.
func TestParseWhenUnsettledOnce(t *testing.T) {
	_, err := rules.Parse("rules.yaml", []byte("rules:\n"+
		"- {name: tag, resources: [pods, deployments, services], labels: {tier: web}}\n"+
		"- name: big\n  resources: [pods, deployments, services]\n  when: \"'tier' in object.metadata.labels\"\n  annotations: {a: b}\n"))
	checkLines(t, err, []string{`rules.yaml:5: rules[1].when: "'tier' in object.metadata.labels" reads label/tier, which rules[0] (tag) sets: …`})
}
