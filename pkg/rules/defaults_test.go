package rules_test

import (
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestParseDefault checks the {…, default: "…"} form of computed values.
func TestParseDefault(t *testing.T) {
	tests := []struct {
		name string
		in   string // the labels mapping of a rule on pods
		want rulefile.Rule
		errs []string
	}{
		{name: "jsonPath", in: "{node: {jsonPath: '{.spec.nodeName}', default: none}}",
			want: rulefile.Rule{Labels: rulefile.Metadata{From: map[string]string{"node": "{.spec.nodeName}"}, Default: map[string]string{"node": "none"}}}},
		{name: "fromNamespace, with ifAbsent", in: "{team: {default: '', fromNamespace: {label: team}, ifAbsent: true}}",
			want: rulefile.Rule{Labels: rulefile.Metadata{FromNamespace: map[string]rulefile.NamespaceKey{"team": {Kind: "label", Key: "team"}}, IfAbsent: map[string]bool{"team": true}, Default: map[string]string{"team": ""}}}},
		{name: "a literal takes none", in: "{psa: {value: baseline, default: privileged}}", errs: []string{
			`rules.yaml:4: rules[0].labels.psa.default: a value is always set, so it takes no default; a default goes with a computed value: jsonPath, cel, fromNamespace, fromNode, fromOwner, fromRef`}},
		{name: "no value", in: "{psa: {default: x}}", errs: []string{
			`rules.yaml:4: rules[0].labels.psa: default is set when a computed value's source is missing, but none is given: add jsonPath, cel, fromNamespace, fromNode, fromOwner, fromRef`}},
		{name: "invalid label value", in: "{node: {jsonPath: '{.spec.nodeName}', default: 'a b'}}", errs: []string{
			`rules.yaml:4: rules[0].labels.node.default: invalid label value "a b": …`}},
		{name: "not a string", in: "{node: {jsonPath: '{.spec.nodeName}', default: 1}}", errs: []string{
			`rules.yaml:4: rules[0].labels.node.default: value must be a string; quote it: "1"`}},
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

// TestEvaluateDefault checks that a default is set, and explained, where
// the source of a computed value is missing, and that the value read wins
// where it is not.
func TestEvaluateDefault(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- name: r\n  resources: [configmaps]\n  annotations:\n"+
		"    owner: {jsonPath: '{.data.owner}', default: unknown}\n"+
		"    team: {fromNamespace: {label: team}, default: none}\n"+
		"    plain: {jsonPath: '{.data.plain}'}\n", rulestest.ConfigMaps)
	target := set.Targets[rulestest.ConfigMaps.GVR]
	nsWith := func(lbls map[string]string) source.Namespaces {
		return func(string) (metav1.Object, bool) { return &metav1.ObjectMeta{Name: "ns", Labels: lbls}, true }
	}
	tests := []struct {
		name      string
		data      map[string]any
		ns        source.Namespaces
		want      map[string]string
		defaulted []string // annotations whose default is set
		problems  int
	}{
		{name: "all read", data: map[string]any{"owner": "ann", "plain": "p"}, ns: nsWith(map[string]string{"team": "a"}),
			want: map[string]string{"owner": "ann", "team": "a", "plain": "p"}},
		{name: "all missing", data: map[string]any{}, ns: nsWith(nil),
			want: map[string]string{"owner": "unknown", "team": "none"}, defaulted: []string{"owner", "team"}, problems: 1},
		{name: "namespace not known", data: map[string]any{"owner": "ann"}, ns: nil,
			want: map[string]string{"owner": "ann", "team": "none"}, defaulted: []string{"team"}, problems: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "x", "namespace": "ns"}, "data": tc.data}}
			e := target.Evaluate(obj, tc.ns)
			if !reflect.DeepEqual(e.Desired.Annotations, tc.want) {
				t.Errorf("annotations %v, want %v", e.Desired.Annotations, tc.want)
			}
			if len(e.Problems) != tc.problems {
				t.Errorf("problems %q, want %d", e.Problems, tc.problems)
			}
			for _, k := range []string{"owner", "team", "plain"} {
				if got, want := e.Defaulted("annotation", k) != "", slices.Contains(tc.defaulted, k); got != want {
					t.Errorf("Defaulted(%s) = %q, want set: %v", k, e.Defaulted("annotation", k), want)
				}
			}
			var explained []string
			for _, w := range target.Explain(obj, tc.ns)[0].Wants {
				if w.Defaulted != "" {
					explained = append(explained, w.Key)
				}
			}
			if !reflect.DeepEqual(explained, tc.defaulted) {
				t.Errorf("explain says defaulted %v, want %v", explained, tc.defaulted)
			}
		})
	}
}
