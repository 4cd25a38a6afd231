package rules_test

import (
	"reflect"
	"strings"
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
		{name: "who created it, recorded", in: "{creator: {cel: request.userInfo.username, once: true, default: unknown}}",
			want: rulefile.Metadata{CEL: map[string]string{"creator": "request.userInfo.username"},
				Default: map[string]string{"creator": "unknown"}, Once: map[string]bool{"creator": true}}},
		{name: "the request, not recorded", in: "{creator: {cel: request.userInfo.username, default: unknown}}", errs: []string{
			`rules.yaml:4: rules[0].labels.creator.cel: reads request, which is known when the object is admitted only: add once: true to record it then (objects admitted without the rule's policy get the default)`}},
		{name: "the request, once: false", in: "{creator: {cel: request.userInfo.username, once: false}}", errs: []string{
			`rules.yaml:4: rules[0].labels.creator.cel: reads request, which is known when the object is admitted only: add once: true to record it then (objects admitted without the rule's policy get the default)`}},
		{name: "the request, misspelt", in: "{creator: {cel: request.userInfo.user, once: true}}", errs: []string{
			`rules.yaml:4: rules[0].labels.creator.cel: invalid CEL value "request.userInfo.user": column 17: undefined field 'user'`}},
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

// TestParseRequestElsewhere checks that the admission request is refused
// where the controller would have to evaluate it: in a when condition and
// in a copy, which follow their sources.
func TestParseRequestElsewhere(t *testing.T) {
	tests := []struct{ name, in, err string }{
		{"when", `when: request.operation == "CREATE"`,
			`rules.yaml:4: rules[0].when: request: a condition is evaluated by the controller too, which never knows the request; request may be read only in a recorded value (once: true)`},
		{"copy", `copy: [{cel: {labels: '{"by": request.userInfo.username}'}}]`,
			`rules.yaml:4: rules[0].copy[0].cel.labels: request: a copy follows its source, and the controller never knows the request; request may be read only in a recorded value (once: true)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: [pods]\n  "+tc.in+"\n  labels: {a: b}\n"))
			checkLines(t, err, []string{tc.err})
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

// TestEvaluateRequest checks that the controller, which never knows the
// request an object was admitted with, gives a value read from it the
// default and records that, and explain says why.
func TestEvaluateRequest(t *testing.T) {
	set := rulestest.Compile(t, `rules:
- {name: creator, resources: [pods], annotations: {created-by: {cel: request.userInfo.username, once: true, default: unknown}}}
`, rulestest.Pods)
	tg := set.Targets[rulestest.Pods.GVR]
	p := pod("")
	ev := tg.Evaluate(p, source.Namespaces(nil))
	if got := ev.Desired.Annotations["created-by"]; got != "unknown" {
		t.Errorf("created-by = %q, want the default", got)
	}
	if got := ev.Recorded("annotation"); !reflect.DeepEqual(got, []string{"created-by"}) {
		t.Errorf("Recorded() = %v, want [created-by]", got)
	}
	v := tg.Explain(p, nil)
	if i := indexOf(v[0].Wants, "created-by"); i < 0 || !strings.Contains(v[0].Wants[i].Defaulted, "known at admission only") {
		t.Errorf("Explain() wants %+v, want created-by defaulted as the request is known at admission only", v[0].Wants)
	}
	// In audit mode, explain says what the rule would record, and why.
	audit := rulestest.Compile(t, `rules:
- {name: creator, mode: audit, resources: [pods], annotations: {created-by: {cel: request.userInfo.username, once: true, default: unknown}}}
`, rulestest.Pods).Targets[rulestest.Pods.GVR].Explain(p, nil)
	if i := indexOf(audit[0].Wants, "created-by"); i < 0 || *audit[0].Wants[i].Value != "unknown" || !audit[0].Wants[i].Once ||
		!strings.Contains(audit[0].Wants[i].Defaulted, "known at admission only") {
		t.Errorf("Explain() in audit mode wants %+v, want created-by recorded as unknown, and why", audit[0].Wants)
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
