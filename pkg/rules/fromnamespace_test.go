package rules_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

const fromNamespaceRules = `rules:
- name: from-ns
  resources: [configmaps, namespaces, nodes]
  annotations: {cost: {fromNamespace: {annotation: example.com/cost}}, fixed: x}
  labels: {env: {fromNamespace: {label: env}}}
`

// withNodes are the resources of a cluster that serves a cluster-scoped
// resource besides namespaces.
var withNodes = []source.Resource{rulestest.ConfigMaps, rulestest.Namespaces, rulestest.Nodes}

func TestFromNamespace(t *testing.T) {
	set := rulestest.Compile(t, fromNamespaceRules, withNodes...)
	target := func(resource string) *rules.Target {
		return set.Targets[schema.GroupVersionResource{Version: "v1", Resource: resource}]
	}
	if tg := target("configmaps"); !tg.ReadsNamespaces || tg.ReadsObjects || tg.NeedsNamespaceLabels {
		t.Errorf("ReadsNamespaces=%v ReadsObjects=%v NeedsNamespaceLabels=%v, want true, false, false", tg.ReadsNamespaces, tg.ReadsObjects, tg.NeedsNamespaceLabels)
	}
	for _, tc := range []struct {
		name, resource string
		obj            metav1.Object
		wantAnns       map[string]string
		wantLabels     map[string]string
		wantProblem    string
		// bare, when set, knows every namespace, without labels or
		// annotations.
		bare bool
	}{
		{"label and annotation of the namespace", "configmaps", &metav1.ObjectMeta{Namespace: "prod-1", Name: "a"},
			map[string]string{"cost": "c-prod-1", "fixed": "x"}, map[string]string{"env": "prod"}, "", false},
		{"unknown namespace sets nothing", "configmaps", &metav1.ObjectMeta{Namespace: "gone", Name: "a"},
			map[string]string{"fixed": "x"}, nil, `namespace "gone" is not known`, false},
		{"a key the namespace lacks is not set", "configmaps", &metav1.ObjectMeta{Namespace: "prod-1", Name: "a"},
			map[string]string{"fixed": "x"}, nil, `namespace "prod-1" has no annotation "example.com/cost"`, true},
		{"a cluster-scoped object reads nothing", "nodes", &metav1.ObjectMeta{Name: "n1"},
			map[string]string{"fixed": "x"}, nil, "cluster-scoped", false},
		{"a Namespace reads its own keys", "namespaces",
			&metav1.ObjectMeta{Name: "own", Labels: map[string]string{"env": "own"}, Annotations: map[string]string{"example.com/cost": "own-cost"}},
			map[string]string{"cost": "own-cost", "fixed": "x"}, map[string]string{"env": "own"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			namespaces := source.Namespaces(nsLabels)
			if tc.bare {
				namespaces = func(name string) (metav1.Object, bool) { return &metav1.ObjectMeta{Name: name}, true }
			}
			ev := target(tc.resource).Evaluate(tc.obj, namespaces)
			if !reflect.DeepEqual(ev.Desired.Annotations, tc.wantAnns) || !reflect.DeepEqual(ev.Desired.Labels, tc.wantLabels) {
				t.Errorf("Evaluate() = annotations %v, labels %v; want %v, %v", ev.Desired.Annotations, ev.Desired.Labels, tc.wantAnns, tc.wantLabels)
			}
			joined := strings.Join(ev.Problems, "\n")
			if (tc.wantProblem == "") != (len(ev.Problems) == 0) || !strings.Contains(joined, tc.wantProblem) {
				t.Errorf("Problems = %q, want one containing %q", ev.Problems, tc.wantProblem)
			}
			// explain agrees with Evaluate.
			v := target(tc.resource).Explain(tc.obj, namespaces)
			if len(v) != 1 || !v[0].Selects || !slices.Equal(v[0].Problems, ev.Problems) {
				t.Errorf("Explain() = %+v, want the problems of Evaluate, %q", v, ev.Problems)
			}
		})
	}
}

func TestNamespaceKeysAndChanges(t *testing.T) {
	set := rulestest.Compile(t, fromNamespaceRules+`- name: selects
  resources: [configmaps]
  namespaceSelector: tier=web
  labels: {web: "true"}
- name: other
  resources: [nodes]
  annotations: {zone: {fromNamespace: {label: zone}}}
`, withNodes...)
	l, a := set.NamespaceKeys()
	if !slices.Equal(l, []string{"env", "zone"}) || !slices.Equal(a, []string{"example.com/cost"}) {
		t.Errorf("Set.NamespaceKeys() = %v, %v; want [env zone], [example.com/cost]", l, a)
	}
	cm := set.Targets[schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}]
	ns := func(lbls, anns map[string]string) metav1.Object {
		return &metav1.ObjectMeta{Name: "ns", Labels: lbls, Annotations: anns}
	}
	for _, tc := range []struct {
		name     string
		old, new metav1.Object
		want     bool
	}{
		{"label read changes", ns(map[string]string{"env": "a"}, nil), ns(map[string]string{"env": "b"}, nil), true},
		{"label read removed", ns(map[string]string{"env": "a"}, nil), ns(nil, nil), true},
		{"annotation read added", ns(nil, nil), ns(nil, map[string]string{"example.com/cost": "1"}), true},
		{"other annotation changes", ns(nil, map[string]string{"x": "1"}), ns(nil, map[string]string{"x": "2"}), false},
		{"any label changes under a namespaceSelector", ns(map[string]string{"x": "1"}, nil), ns(map[string]string{"x": "2"}, nil), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cm.NamespaceChangeMatters(tc.old, tc.new); got != tc.want {
				t.Errorf("NamespaceChangeMatters() = %v, want %v", got, tc.want)
			}
		})
	}
}
