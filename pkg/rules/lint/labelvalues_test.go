package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// TestInvalidLabelValues checks that a label whose computed value may be
// no valid label value is warned of, at its line, unless it gives
// ifInvalid, only copies another label or only chooses between valid
// literals.
func TestInvalidLabelValues(t *testing.T) {
	tests := []struct {
		name  string
		value string // the value of the label k, on line 5
		want  string // the warning's message; "" for none
	}{
		{name: "jsonPath", value: "{jsonPath: '{.metadata.name}'}",
			want: `rule "r": label "k" is read with jsonPath '{.metadata.name}', which may yield no valid label value (at most 63 letters, digits, '-', '_' and '.'), ` +
				`and the label is then not set; add ifInvalid: truncate, sanitize or hash to make such a value valid`},
		{name: "jsonPath with text", value: "{jsonPath: 'v{.metadata.labels.team}'}",
			want: `rule "r": label "k" is read with jsonPath 'v{.metadata.labels.team}', which may yield …`},
		{name: "jsonPath with ifInvalid", value: "{jsonPath: '{.metadata.name}', ifInvalid: truncate}"},
		{name: "jsonPath copies a label", value: "{jsonPath: '{.metadata.labels.team}'}"},
		{name: "jsonPath copies a prefixed label", value: `{jsonPath: '{.metadata.labels.app\.kubernetes\.io/name}'}`},
		{name: "CEL", value: `{cel: "object.metadata.name + '-x'"}`,
			want: `rule "r": label "k" is computed by CEL "object.metadata.name + '-x'", which may yield …`},
		{name: "CEL with ifInvalid", value: `{cel: "object.metadata.name", ifInvalid: hash}`},
		{name: "CEL copies a label", value: `{cel: "object.metadata.labels.team"}`},
		{name: "CEL copies a label of the namespace", value: `{cel: "namespaceObject.metadata.labels['team']"}`},
		{name: "CEL copies an optional label", value: `{cel: "object.metadata.?labels.team.orValue('none')"}`},
		{name: "CEL copies an optional label, or no label value", value: `{cel: "object.metadata.?labels.team.orValue('no one')"}`,
			want: `rule "r": label "k" is computed by CEL "object.metadata.?labels.team.orValue('no one')", which may yield …`},
		{name: "CEL reads an annotation", value: `{cel: "object.metadata.annotations['team']"}`,
			want: `rule "r": label "k" is computed by CEL "object.metadata.annotations['team']", which may yield …`},
		{name: "CEL chooses between literals", value: `{cel: "object.metadata.name == 'a' ? 'stable' : (has(object.spec) ? 'canary' : 'none')"}`},
		{name: "CEL chooses between literals, one no label value", value: `{cel: "object.metadata.name == 'a' ? 'stable' : 'no one'"}`,
			want: `rule "r": label "k" is computed by CEL "object.metadata.name == 'a' ? 'stable' : 'no one'", which may yield …`},
		{name: "a label of the namespace", value: "{fromNamespace: {label: team}}"},
		{name: "an annotation of the namespace", value: "{fromNamespace: {annotation: example.com/team}}",
			want: `rule "r": label "k" is copied from the annotation "example.com/team" of the namespace, which may yield …`},
		{name: "an annotation of the namespace, sanitized", value: "{fromNamespace: {annotation: example.com/team}, ifInvalid: sanitize}"},
		{name: "a label of the Node", value: "{fromNode: {label: zone}}"},
		{name: "an annotation of the Node", value: "{fromNode: {annotation: example.com/rack}}",
			want: `rule "r": label "k" is copied from the annotation "example.com/rack" of the Pod's Node, which may yield …`},
		{name: "a literal", value: "web"},
		{name: "a default that may be no label value", value: "{fromOwner: {label: team}, default: {fromNamespace: {annotation: example.com/team}, default: none}}",
			want: `rule "r": label "k" is defaulted to a value copied from the annotation "example.com/team" of the namespace, which may yield …`},
		{name: "a default made valid by its own ifInvalid", value: "{fromOwner: {label: team}, default: {fromNamespace: {annotation: example.com/team}, ifInvalid: sanitize}}"},
		{name: "ifInvalid of the first form is not its default's", value: "{jsonPath: '{.metadata.name}', ifInvalid: hash, default: {fromNamespace: {annotation: example.com/team}}}",
			want: `rule "r": label "k" is defaulted to a value copied from the annotation "example.com/team" of the namespace, which may yield …`},
		{name: "a default that is a label", value: "{fromOwner: {label: team}, default: {fromNamespace: {label: team}, default: none}}"},
		{name: "the first of a chain is said", value: "{jsonPath: '{.metadata.name}', default: {fromNamespace: {annotation: example.com/team}}}",
			want: `rule "r": label "k" is read with jsonPath '{.metadata.name}', which may yield …`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rulefile.Parse("rules.yaml", []byte(fmt.Sprintf("rules:\n- name: r\n  resources: [pods]\n  labels:\n    k: %s\n  annotations:\n    a: %s\n",
				tc.value, "{jsonPath: '{.metadata.name}'}")))
			if err != nil {
				t.Fatal(err)
			}
			got := InvalidLabelValues(f)
			if tc.want == "" {
				if len(got) > 0 {
					t.Errorf("InvalidLabelValues() = %v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Line != 5 || got[0].Field != "rules[0].labels.k" || !matches(got[0].Message, tc.want) {
				t.Errorf("InvalidLabelValues() = %+v\nwant one at line 5, rules[0].labels.k: %s", got, tc.want)
			}
		})
	}
}

// matches reports whether got is want, or starts with want's text before
// a closing "…".
func matches(got, want string) bool {
	if prefix, ok := strings.CutSuffix(want, "…"); ok {
		return strings.HasPrefix(got, prefix)
	}
	return got == want
}
