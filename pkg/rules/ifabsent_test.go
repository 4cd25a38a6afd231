package rules_test

import (
	"reflect"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// TestParseIfAbsent checks the {…, ifAbsent: true} form of values.
func TestParseIfAbsent(t *testing.T) {
	tests := []struct {
		name string
		in   string // the labels mapping of a rule on pods
		want rulefile.Rule
		errs []string
	}{
		{name: "literal", in: "{psa: {value: baseline, ifAbsent: true}}",
			want: rulefile.Rule{Labels: rulefile.Metadata{Values: map[string]string{"psa": "baseline"}, IfAbsent: map[string]bool{"psa": true}}}},
		{name: "value without ifAbsent is a literal", in: "{psa: {value: baseline}, x: {value: y, ifAbsent: false}}",
			want: rulefile.Rule{Labels: rulefile.Metadata{Values: map[string]string{"psa": "baseline", "x": "y"}}}},
		{name: "jsonPath", in: "{node: {jsonPath: '{.spec.nodeName}', ifAbsent: true}}",
			want: rulefile.Rule{Labels: rulefile.Metadata{From: map[string]string{"node": "{.spec.nodeName}"}, IfAbsent: map[string]bool{"node": true}}}},
		{name: "fromNamespace", in: "{team: {ifAbsent: true, fromNamespace: {label: team}}}",
			want: rulefile.Rule{Labels: rulefile.Metadata{FromNamespace: map[string]rulefile.NamespaceKey{"team": {Kind: "label", Key: "team"}}, IfAbsent: map[string]bool{"team": true}}}},
		{name: "no value", in: "{psa: {ifAbsent: true}}", errs: []string{
			`rules.yaml:4: rules[0].labels.psa: ifAbsent says when to set a value, but none is given: add value, jsonPath, cel, fromNamespace, fromNode, fromOwner, fromRef`}},
		{name: "not a boolean", in: "{psa: {value: baseline, ifAbsent: 'yes'}}", errs: []string{
			`rules.yaml:4: rules[0].labels.psa.ifAbsent: must be true or false, got "yes"`}},
		{name: "two values", in: "{psa: {value: baseline, jsonPath: '{.spec.x}', ifAbsent: true}}", errs: []string{
			`rules.yaml:4: rules[0].labels.psa: gives both value and jsonPath; a value is read one way`}},
		{name: "invalid label value", in: "{psa: {value: 'a b', ifAbsent: true}}", errs: []string{
			`rules.yaml:4: rules[0].labels.psa.value: invalid label value "a b": …`}},
		{name: "unquoted boolean value", in: "{psa: {value: true, ifAbsent: true}}", errs: []string{
			`rules.yaml:4: rules[0].labels.psa.value: value must be a string; quote it: "true"`}},
		{name: "unknown field", in: "{psa: {value: baseline, ifabsent: true}}", errs: []string{
			`rules.yaml:4: rules[0].labels.psa.ifabsent: unknown field (did you mean "ifAbsent"?); known fields are value, jsonPath, cel, fromNamespace, fromNode, fromOwner, fromRef, ifAbsent, default, ifInvalid, once`}},
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
			got := f.Rules[0]
			tc.want.Name, tc.want.Resources = "r", []string{"pods"}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
