package rules_test

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestEvaluateUnsetAndHeld checks the reason given for each key a rule
// cannot compute, and that only a failed expression holds its key: an
// error, or a result that is not a string, holds it whether or not a
// default stands in for it where the object lacks the key; an invalid
// value or a missing source does not; and a key another rule sets is
// that rule's, not held.
func TestEvaluateUnsetAndHeld(t *testing.T) {
	cm := func(data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "x", "namespace": "ns"}, "data": data}}
	}
	tests := []struct {
		name      string
		labels    string // the labels mapping of rule r
		more      string // another rule, or ""
		obj       *unstructured.Unstructured
		want      map[string]string // Desired.Labels
		wantUnset []rules.Unset
		wantHeld  []string
	}{
		{name: "the expression yields", labels: "{color: {cel: 'object.data.color'}}", obj: cm(map[string]any{"color": "red"}),
			want: map[string]string{"color": "red"}},
		{name: "an error holds the key", labels: "{color: {cel: 'object.data.color'}}", obj: cm(nil),
			wantUnset: []rules.Unset{{Rule: "r", Kind: "label", Key: "color", Reason: rules.ReasonError}}, wantHeld: []string{"color"}},
		{name: "a division by zero holds the key", labels: "{n: {cel: 'string(100 / size(object.data))'}}", obj: cm(map[string]any{}),
			wantUnset: []rules.Unset{{Rule: "r", Kind: "label", Key: "n", Reason: rules.ReasonError}}, wantHeld: []string{"n"}},
		{name: "an error with a default: held, the default set where absent", labels: "{color: {cel: 'object.data.color', default: none}}", obj: cm(nil),
			want: map[string]string{"color": "none"}, wantUnset: []rules.Unset{{Rule: "r", Kind: "label", Key: "color", Reason: rules.ReasonError}},
			wantHeld: []string{"color"}},
		{name: "an invalid value is not held", labels: "{color: {cel: 'object.data.color'}}", obj: cm(map[string]any{"color": "a b"}),
			wantUnset: []rules.Unset{{Rule: "r", Kind: "label", Key: "color", Reason: rules.ReasonInvalid}}},
		{name: "a missing field is not held", labels: "{color: {jsonPath: '{.data.color}'}}", obj: cm(nil),
			wantUnset: []rules.Unset{{Rule: "r", Kind: "label", Key: "color", Reason: rules.ReasonSourceMissing}}},
		{name: "a missing field with a default is set, not unset", labels: "{color: {jsonPath: '{.data.color}', default: none}}", obj: cm(nil),
			want: map[string]string{"color": "none"}},
		{name: "another rule sets the key: not held", labels: "{color: {cel: 'object.data.color'}}",
			more: "- {name: s, resources: [configmaps], names: [x], labels: {color: blue}}\n", obj: cm(nil),
			want: map[string]string{"color": "blue"}, wantUnset: []rules.Unset{{Rule: "r", Kind: "label", Key: "color", Reason: rules.ReasonError}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := rulestest.Compile(t, "rules:\n- {name: r, resources: [configmaps], labels: "+tc.labels+"}\n"+tc.more, rulestest.ConfigMaps)
			ev := set.Targets[rulestest.ConfigMaps.GVR].Evaluate(tc.obj, nil)
			if got := ev.Desired.Labels; !reflect.DeepEqual(got, tc.want) && len(got)+len(tc.want) > 0 {
				t.Errorf("Desired.Labels = %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(ev.Unset, tc.wantUnset) {
				t.Errorf("Unset = %+v, want %+v", ev.Unset, tc.wantUnset)
			}
			if got := ev.Held("label"); !reflect.DeepEqual(got, tc.wantHeld) {
				t.Errorf("Held(label) = %v, want %v", got, tc.wantHeld)
			}
			if got := ev.Held("annotation"); len(got) > 0 {
				t.Errorf("Held(annotation) = %v, want none", got)
			}
		})
	}
}

// TestTargetSources checks the sources each target needs watched: the
// namespace for a namespaced resource, and for Namespaces selected by
// label; the Node for a fromNode value; none for a cluster-scoped
// resource otherwise; and the namespace for a target made outside
// Compile, such as a prune's.
func TestTargetSources(t *testing.T) {
	for _, tc := range []struct {
		name, rules string
		res         source.Resource
		want        []*source.Source
	}{
		{"namespaced", "rules:\n- {name: r, resources: [configmaps], annotations: {a: b}}\n", rulestest.ConfigMaps, []*source.Source{source.Namespace}},
		{"fromNode", "rules:\n- {name: r, resources: [pods], labels: {z: {fromNode: {label: z}}}}\n", rulestest.Pods,
			[]*source.Source{source.Namespace, source.Node}},
		{"cluster-scoped", "rules:\n- {name: r, resources: [nodes], annotations: {a: b}}\n", rulestest.Nodes, nil},
		{"Namespaces by label", "rules:\n- {name: r, resources: [namespaces], namespaceSelector: team=a, annotations: {a: b}}\n", rulestest.Namespaces,
			[]*source.Source{source.Namespace}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := rulestest.Compile(t, tc.rules, tc.res)
			target := set.Targets[tc.res.GVR]
			if got := target.Sources(); !slices.Equal(got, tc.want) {
				t.Errorf("Sources() = %v, want %v", got, tc.want)
			}
			// Found once, when compiled: every sync asks.
			if n := testing.AllocsPerRun(10, func() { target.Sources() }); n != 0 {
				t.Errorf("Sources() of a compiled target allocates %v times, want 0", n)
			}
		})
	}
	prune := &rules.Target{Resource: rulestest.ConfigMaps}
	if got := prune.Sources(); !reflect.DeepEqual(got, []*source.Source{source.Namespace}) {
		t.Errorf("a prune's Sources() = %v, want the namespace: its objects' namespaces may opt out", got)
	}
}
