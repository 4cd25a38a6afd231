package rules_test

import (
	"reflect"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/verdict"
)

// TestParseOnce checks once: what it decodes to, and the errors that name
// the field.
func TestParseOnce(t *testing.T) {
	tests := []struct {
		name string
		in   string // the labels mapping of a rule on pods
		want rulefile.Metadata
		errs []string
	}{
		{name: "a value read, recorded", in: "{team: {fromNamespace: {label: team}, once: true, default: none}}",
			want: rulefile.Metadata{FromNamespace: map[string]rulefile.NamespaceKey{"team": {Kind: "label", Key: "team"}},
				Default: map[string]string{"team": "none"}, Once: map[string]bool{"team": true}}},
		{name: "once: false is no record", in: "{team: {fromNamespace: {label: team}, once: false}}",
			want: rulefile.Metadata{FromNamespace: map[string]rulefile.NamespaceKey{"team": {Kind: "label", Key: "team"}}}},
		{name: "a literal", in: "{team: {value: a, once: true}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.once: a value never changes, so it takes no once; once records a computed value: jsonPath, cel, fromNamespace, fromNode, fromOwner, fromRef`}},
		{name: "with ifAbsent", in: "{team: {fromNamespace: {label: team}, ifAbsent: true, once: true}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.once: once sets the key only where it is absent already, and keeps it; give once or ifAbsent, not both`}},
		{name: "no value", in: "{team: {once: true}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team: once records a computed value, but none is given: add jsonPath, cel, fromNamespace, fromNode, fromOwner, fromRef`}},
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
			if got := f.Rules[0].Labels; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestEvaluateOnce checks that an evaluation names the keys its rules
// record, those another rule sets first excepted, and that explain says
// a key is recorded.
func TestEvaluateOnce(t *testing.T) {
	set := rulestest.Compile(t, `rules:
- {name: first, resources: [pods], selector: app, labels: {b: {jsonPath: '{.metadata.name}'}}}
- {name: record, resources: [pods], labels: {a: {jsonPath: '{.metadata.name}', once: true}, b: {jsonPath: '{.metadata.name}', once: true}}}
`, rulestest.Pods)
	tg := set.Targets[rulestest.Pods.GVR]
	p := pod("")
	p.SetLabels(map[string]string{"app": "web"})
	ev := tg.Evaluate(p, source.Namespaces(nil))
	if got := ev.Recorded("label"); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("Recorded() = %v, want [a]: b is set by the rule before, which does not record it", got)
	}
	v := tg.Explain(p, nil)
	if i := indexOf(v[1].Wants, "a"); i < 0 || !v[1].Wants[i].Once {
		t.Errorf("Explain() wants %+v, want a recorded", v[1].Wants)
	}
}

// indexOf returns the index of the want of key in wants, or -1.
func indexOf(wants []verdict.Want, key string) int {
	for i, w := range wants {
		if w.Key == key {
			return i
		}
	}
	return -1
}
