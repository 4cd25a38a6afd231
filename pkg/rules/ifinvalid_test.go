package rules_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestParseIfInvalid checks the {…, ifInvalid: MODE} form of computed
// label values, and that it is refused, at its line, where it cannot
// apply.
func TestParseIfInvalid(t *testing.T) {
	tests := []struct {
		name string
		in   string // the rule's fields after name and resources
		want rulefile.Rule
		errs []string
	}{
		{name: "each computed form", in: "  labels:\n" +
			"    a: {jsonPath: '{.metadata.name}', ifInvalid: truncate}\n" +
			"    b: {cel: object.metadata.name, ifInvalid: hash, default: none}\n" +
			"    c: {fromNamespace: {annotation: example.com/c}, ifInvalid: sanitize}\n" +
			"    d: {ifInvalid: hash, fromNode: {annotation: example.com/d}, ifAbsent: true}\n",
			want: rulefile.Rule{Labels: rulefile.Metadata{From: map[string]string{"a": "{.metadata.name}"}, CEL: map[string]string{"b": "object.metadata.name"}, FromNamespace: map[string]rulefile.NamespaceKey{"c": {Kind: "annotation", Key: "example.com/c"}}, FromRelated: map[string]rulefile.RelatedKey{"d": {Source: source.Node, Kind: "annotation", Key: "example.com/d"}}, Default: map[string]string{"b": "none"}, IfAbsent: map[string]bool{"d": true}, IfInvalid: map[string]string{"a": "truncate", "b": "hash", "c": "sanitize", "d": "hash"}}}},
		{name: "an annotation takes none", in: "  annotations:\n    a: {jsonPath: '{.metadata.name}',\n      ifInvalid: truncate}\n", errs: []string{
			`rules.yaml:6: rules[0].annotations.a.ifInvalid: an annotation value may be any string, so it takes no ifInvalid; ifInvalid makes a computed label value a valid label value`}},
		{name: "a literal takes none", in: "  labels:\n    a: {value: web, ifInvalid: hash}\n", errs: []string{
			`rules.yaml:5: rules[0].labels.a.ifInvalid: a value is checked when the file is loaded, so it takes no ifInvalid; ifInvalid goes with a computed value: jsonPath, cel, fromNamespace, fromNode…`}},
		{name: "an unknown mode", in: "  labels:\n    a: {jsonPath: '{.metadata.name}', ifInvalid: shorten}\n", errs: []string{
			`rules.yaml:5: rules[0].labels.a.ifInvalid: must be truncate, sanitize or hash, got "shorten"`}},
		{name: "not a string", in: "  labels:\n    a: {jsonPath: '{.metadata.name}', ifInvalid: [hash]}\n", errs: []string{
			`rules.yaml:5: rules[0].labels.a.ifInvalid: must be a string, got a list`}},
		{name: "no value", in: "  labels:\n    a: {ifInvalid: hash}\n", errs: []string{
			`rules.yaml:5: rules[0].labels.a: ifInvalid makes a computed value a valid label value, but none is given: add jsonPath, cel, fromNamespace, fromNode…`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: [pods]\n"+tc.in))
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

// ifInvalidRules read one value of a ConfigMap, and an annotation of its
// namespace, into labels, each made valid its own way or not at all.
const ifInvalidRules = `rules:
- name: r
  resources: [configmaps]
  labels:
    truncated: {jsonPath: '{.data.v}', ifInvalid: truncate}
    sanitized: {jsonPath: '{.data.v}', ifInvalid: sanitize}
    hashed: {jsonPath: '{.data.v}', ifInvalid: hash}
    plain: {jsonPath: '{.data.v}'}
    fallback: {jsonPath: '{.data.v}', ifInvalid: truncate, default: none}
    cel: {cel: object.data.v, ifInvalid: hash}
    ns: {fromNamespace: {annotation: example.com/v}, ifInvalid: truncate}
`

// TestEvaluateIfInvalid checks that a value read that is no valid label
// value is made one as ifInvalid says, whatever the form read it, that
// explain says how, and that one it cannot make valid is unset (or its
// default set), as without ifInvalid, with the reason "invalid".
func TestEvaluateIfInvalid(t *testing.T) {
	target := rulestest.Compile(t, ifInvalidRules, rulestest.ConfigMaps).Targets[rulestest.ConfigMaps.GVR]
	long := strings.Repeat("a", 91)
	tests := []struct {
		name      string
		v         string
		want      map[string]string
		madeValid map[string]string // explain's MadeValid, by key
		unset     []string          // keys unset, reason invalid, sorted
		problem   string            // a problem must say this
	}{
		{name: "valid: kept", v: "web",
			want: map[string]string{"truncated": "web", "sanitized": "web", "hashed": "web", "plain": "web", "fallback": "web", "cel": "web", "ns": "web"}},
		{name: "91 characters", v: long,
			want: map[string]string{"truncated": long[:63], "sanitized": long[:63], "hashed": long[:52] + "-9b9fe7f0a4",
				"fallback": long[:63], "cel": long[:52] + "-9b9fe7f0a4", "ns": long[:63]},
			madeValid: map[string]string{"truncated": "truncated from 91 characters", "sanitized": "sanitized from 91 characters",
				"hashed": "hashed from 91 characters", "fallback": "truncated from 91 characters", "cel": "hashed from 91 characters",
				"ns": "truncated from 91 characters"},
			unset: []string{"plain"}},
		{name: "a space: truncate cannot", v: "hello world",
			want: map[string]string{"sanitized": "hello-world", "hashed": "hello-world-b94d27b993", "fallback": "none", "cel": "hello-world-b94d27b993"},
			madeValid: map[string]string{"sanitized": "sanitized from 11 characters", "hashed": "hashed from 11 characters",
				"cel": "hashed from 11 characters"},
			unset:   []string{"ns", "plain", "truncated"},
			problem: "r: truncated: the value read (11 bytes) is not valid: … (ifInvalid: truncate leaves no valid label value)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "x", "namespace": "ns"}, "data": map[string]any{"v": tc.v}}}
			namespaces := source.Namespaces(func(string) (metav1.Object, bool) {
				return &metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{"example.com/v": tc.v}}, true
			})
			e := target.Evaluate(obj, namespaces)
			if !reflect.DeepEqual(e.Desired.Labels, tc.want) {
				t.Errorf("labels %v\nwant   %v", e.Desired.Labels, tc.want)
			}
			var unset []string
			for _, u := range e.Unset {
				if u.Reason != rules.ReasonInvalid {
					t.Errorf("unset %+v, want reason %s", u, rules.ReasonInvalid)
				}
				unset = append(unset, u.Key)
			}
			slices.Sort(unset)
			if !reflect.DeepEqual(unset, tc.unset) {
				t.Errorf("unset %v, want %v", unset, tc.unset)
			}
			if tc.problem != "" && !slices.ContainsFunc(e.Problems, func(p string) bool { return lineMatches(p, tc.problem) }) {
				t.Errorf("problems %q, want one like %q", e.Problems, tc.problem)
			}
			madeValid := map[string]string{}
			for _, w := range target.Explain(obj, namespaces)[0].Wants {
				if w.MadeValid != "" {
					madeValid[w.Key] = w.MadeValid
				}
			}
			if len(madeValid) == 0 {
				madeValid = nil
			}
			if !reflect.DeepEqual(madeValid, tc.madeValid) {
				t.Errorf("explain says made valid %v\nwant %v", madeValid, tc.madeValid)
			}
		})
	}
}
