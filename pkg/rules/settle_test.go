package rules_test

import (
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// TestParseUnsettled checks that rules whose writes flip their own or each
// other's selection are refused, naming the selector's line, and that
// rules that merely depend on each other are accepted.
func TestParseUnsettled(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // nil: accepted
	}{
		{"selector needs the label absent", "rules:\n- name: psa\n  resources: [namespaces]\n" +
			"  selector: '!pod-security.kubernetes.io/enforce'\n  labels: {pod-security.kubernetes.io/enforce: baseline}\n", []string{
			`rules.yaml:4: rules[0].selector: "!pod-security.kubernetes.io/enforce" tests label "pod-security.kubernetes.io/enforce", which the rule sets to "baseline": ` +
				`after its own write the rule no longer selects the object, so the controller would delete the label it set (and set it again where absent, without end); ` +
				`leave the label out of the selector; to set it only where it is absent, give it as {value: "…", ifAbsent: true}`}},
		{"selector needs another value", "rules:\n- name: tier\n  resources: [pods]\n  selector: tier=web\n  labels: {tier: frontend}\n", []string{
			`rules.yaml:4: rules[0].selector: "tier=web" tests label "tier", which the rule sets to "frontend": after its own write…`}},
		{"value read from the object", "rules:\n- name: tier\n  resources: [pods]\n  selector: tier in (a,b)\n  labels: {tier: {jsonPath: '{.spec.nodeName}'}}\n", []string{
			`rules.yaml:4: rules[0].selector: "tier in (a,b)" tests label "tier", which the rule sets to a value read from the object: after…`}},
		{"namespaceSelector of namespaces", "rules:\n- name: n\n  resources: [ns]\n  namespaceSelector: '!team'\n  labels: {team: a}\n", []string{
			`rules.yaml:4: rules[0].namespaceSelector: "!team" tests label "team", which the rule sets to "a": after…`}},
		{"cycle of two rules", "rules:\n" +
			"- {name: a, resources: [pods], selector: '!x', labels: {y: '1'}}\n" +
			"- {name: b, resources: [pods], selector: '!y', labels: {x: '1'}}\n", []string{
			`rules.yaml:2: rules[0].selector: tests label "x", set by rules[1] (b), whose selector tests label "y", which this rule sets on the same resource: ` +
				`each rule's write decides whether the next selects the object, and the controller writes them together, so their labels can be added and deleted without end; ` +
				`select by a label no rule sets, or merge the rules`}},
		{"cycle of writes that keep matching", "rules:\n" +
			"- {name: a, resources: [pods], selector: y=1, labels: {x: '1'}}\n" +
			"- {name: b, resources: [pods], selector: x, labels: {y: '1'}}\n", []string{
			`rules.yaml:2: rules[0].selector: tests label "y", set by rules[1] (b), whose selector tests label "x", which this rule sets on the same resource…`}},
		{"cycle of three rules", "rules:\n" +
			"- {name: a, resources: [pods, deployments], selector: z, labels: {x: '1'}}\n" +
			"- {name: b, resources: [pods], selector: x, labels: {y: '1'}}\n" +
			"- {name: c, resources: [pods], selector: y, labels: {z: '1'}}\n", []string{
			`rules.yaml:2: rules[0].selector: tests label "z", set by rules[2] (c), whose selector tests label "y", set by rules[1] (b), whose selector tests label "x", which this rule sets…`}},
		{"cycle through namespaceSelector", "rules:\n" +
			"- {name: a, resources: [namespaces], namespaceSelector: x, labels: {y: '1'}}\n" +
			"- {name: b, resources: [namespace], selector: y, labels: {x: '1'}}\n", []string{
			`rules.yaml:2: rules[0].namespaceSelector: tests label "x", set by rules[1] (b), whose selector tests label "y", which this rule sets…`}},

		{"set if absent, selected without it", "rules:\n- name: psa\n  resources: [namespaces]\n" +
			"  selector: '!pod-security.kubernetes.io/enforce'\n  labels: {pod-security.kubernetes.io/enforce: {value: baseline, ifAbsent: true}}\n", []string{
			`rules.yaml:4: rules[0].selector: "!pod-security.kubernetes.io/enforce" tests label "pod-security.kubernetes.io/enforce", which the rule sets to "baseline": after…`}},
		{"set if absent, selected with it", "rules:\n- {name: a, resources: [pods], selector: tier=web, labels: {tier: {value: frontend, ifAbsent: true}}}\n", nil},
		{"set if absent without a selector", "rules:\n- {name: a, resources: [namespaces], labels: {pod-security.kubernetes.io/enforce: {value: baseline, ifAbsent: true}}}\n", nil},
		{"selector the write keeps matching", "rules:\n- {name: a, resources: [pods], selector: 'tier,tier!=db', labels: {tier: web}}\n", nil},
		{"exists with a value read", "rules:\n- {name: a, resources: [pods], selector: tier, labels: {tier: {jsonPath: '{.spec.nodeName}'}}}\n", nil},
		{"one-shot removal", "rules:\n- {name: a, resources: [pods], selector: old=true, removeLabels: [old]}\n", nil},
		{"annotations are not selected", "rules:\n- {name: a, resources: [pods], selector: '!x', annotations: {x: '1'}}\n", nil},
		{"namespaceSelector of pods", "rules:\n- {name: a, resources: [pods], namespaceSelector: '!team', labels: {team: a}}\n", nil},
		{"audit rules write nothing", "rules:\n- {name: a, resources: [pods], mode: audit, selector: '!x', labels: {x: '1'}}\n", nil},
		{"a chain settles", "rules:\n" +
			"- {name: a, resources: [pods], labels: {tier: web}}\n" +
			"- {name: b, resources: [pods], selector: tier=web, labels: {web: 'true'}}\n" +
			"- {name: c, resources: [pods], selector: '!web', labels: {other: 'true'}}\n", nil},
		{"different resources", "rules:\n" +
			"- {name: a, resources: [pods], selector: '!x', labels: {y: '1'}}\n" +
			"- {name: b, resources: [services], selector: '!y', labels: {x: '1'}}\n", nil},
		{"a cycle through a removal settles", "rules:\n" +
			"- {name: a, resources: [pods], selector: x, labels: {y: '1'}}\n" +
			"- {name: b, resources: [pods], selector: y, removeLabels: [x]}\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rules.Parse("rules.yaml", []byte(tc.in))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			checkLines(t, err, tc.want)
		})
	}
}

// TestCompileUnsettled checks that Compile finds the cycles Parse cannot
// see: rules that name one resource in two ways.
func TestCompileUnsettled(t *testing.T) {
	f, err := rules.Parse("rules.yaml", []byte("rules:\n"+
		"- {name: a, resources: [deploy], selector: '!x', labels: {y: '1'}}\n"+
		"- {name: b, resources: [deployments.v1.apps], selector: '!y', labels: {x: '1'}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = rules.Compile("rules.yaml", f, fakeResolve)
	want := `rules.yaml: rules[0].selector: tests label "x", set by rules[1] (b), whose selector tests label "y", which this rule sets on the same resource: ` +
		`each rule's write decides whether the next selects the object, and the controller writes them together, so their labels can be added and deleted without end; ` +
		`select by a label no rule sets, or merge the rules`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}
