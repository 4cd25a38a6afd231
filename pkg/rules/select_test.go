package rules_test

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

func obj(ns, name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"owner": "ops"}}}
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(lbls)
	return u
}

// nsLabels knows two namespaces, prod-1 and dev-1.
// served are the resources of the tests' cluster.
var served = []source.Resource{rulestest.ConfigMaps, rulestest.Namespaces}

func nsLabels(name string) (metav1.Object, bool) {
	l, ok := map[string]labels.Set{"prod-1": {"env": "prod"}, "dev-1": {"env": "dev"}}[name]
	if !ok {
		return nil, false
	}
	return &metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{"example.com/cost": "c-" + name}}, true
}

func TestEvaluate(t *testing.T) {
	set := rulestest.Compile(t, `rules:
- name: web
  resources: [configmaps]
  selector: app=web
  annotations: {by: selector, owner: {jsonPath: '{.spec.owner}'}, missing: {jsonPath: '{.spec.nope}'}}
  labels: {role: frontend}
- name: names
  resources: [configmaps]
  names: ["db-*"]
  removeLabels: [app]
  annotations: {by: names}
- name: prod
  resources: [configmaps]
  namespaceSelector: env=prod
  annotations: {env: prod}
- name: globs
  resources: [configmaps]
  namespaces: ["prod-*", "dev-*"]
  excludeNamespaces: [dev-1]
  removeAnnotations: [legacy]
`, served...)
	target := set.SortedTargets()[0]
	if !target.ReadsObjects || !target.NeedsNamespaceLabels {
		t.Errorf("ReadsObjects=%v NeedsNamespaceLabels=%v, want both", target.ReadsObjects, target.NeedsNamespaceLabels)
	}
	tests := []struct {
		name          string
		obj           *unstructured.Unstructured
		wantAnns      map[string]string
		wantLabels    map[string]string
		wantRemoveA   []string
		wantRemoveL   []string
		wantConflicts []rules.Conflict
		wantProblems  int
	}{
		{name: "selector, JSONPath, namespace labels and globs",
			obj:         obj("prod-1", "web-1", map[string]string{"app": "web"}),
			wantAnns:    map[string]string{"by": "selector", "owner": "ops", "env": "prod"},
			wantLabels:  map[string]string{"role": "frontend"},
			wantRemoveA: []string{"legacy"}, wantProblems: 1},
		{name: "excluded namespace, unselected labels",
			obj: obj("dev-1", "web-1", map[string]string{"app": "api"})},
		{name: "names glob; conflict with an earlier rule keeps the earlier value",
			obj:           obj("dev-1", "db-1", map[string]string{"app": "web"}),
			wantAnns:      map[string]string{"by": "selector", "owner": "ops"},
			wantLabels:    map[string]string{"role": "frontend"},
			wantRemoveL:   []string{"app"},
			wantProblems:  1,
			wantConflicts: []rules.Conflict{{Kind: "annotation", Key: "by", Kept: "web", Dropped: "names"}}},
		{name: "unknown namespace does not match a namespaceSelector",
			obj:         obj("prod-2", "x", nil),
			wantRemoveA: []string{"legacy"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := target.Evaluate(tc.obj, source.Namespaces(nsLabels))
			if !reflect.DeepEqual(ev.Annotations, tc.wantAnns) || !reflect.DeepEqual(ev.Labels, tc.wantLabels) {
				t.Errorf("annotations %v labels %v, want %v %v", ev.Annotations, ev.Labels, tc.wantAnns, tc.wantLabels)
			}
			if !reflect.DeepEqual(ev.RemoveAnnotations, tc.wantRemoveA) || !reflect.DeepEqual(ev.RemoveLabels, tc.wantRemoveL) {
				t.Errorf("remove %v %v, want %v %v", ev.RemoveAnnotations, ev.RemoveLabels, tc.wantRemoveA, tc.wantRemoveL)
			}
			if !reflect.DeepEqual(ev.Conflicts, tc.wantConflicts) {
				t.Errorf("conflicts %+v, want %+v", ev.Conflicts, tc.wantConflicts)
			}
			if len(ev.Problems) != tc.wantProblems {
				t.Errorf("problems %v, want %d", ev.Problems, tc.wantProblems)
			}
		})
	}
}

// A Namespace is selected by its own name and labels.
func TestEvaluateNamespaces(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- name: ns\n  resources: [namespaces]\n  namespaces: [\"prod-*\"]\n  namespaceSelector: env=prod\n  annotations: {a: \"1\"}\n", served...)
	target := set.SortedTargets()[0]
	var got []string
	for _, o := range []*unstructured.Unstructured{
		obj("", "prod-1", map[string]string{"env": "prod"}),
		obj("", "prod-2", map[string]string{"env": "dev"}),
		obj("", "dev-1", map[string]string{"env": "prod"}),
	} {
		if ev := target.Evaluate(o, nil); ev.Annotations["a"] == "1" {
			got = append(got, o.GetName())
		}
	}
	sort.Strings(got)
	if want := []string{"prod-1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("selected %v, want %v", got, want)
	}
}

// Rules without selection or JSONPath are evaluated once, at compile time.
func TestEvaluateStaticIsShared(t *testing.T) {
	target := rulestest.Compile(t, "rules:\n- name: a\n  resources: [configmaps]\n  annotations: {a: \"1\"}\n", served...).SortedTargets()[0]
	if target.Evaluate(obj("x", "y", nil), nil) != target.Evaluate(obj("z", "w", nil), nil) {
		t.Errorf("static rules evaluated per object")
	}
	if target.ReadsObjects || target.NeedsNamespaceLabels {
		t.Errorf("static target claims to read objects or namespace labels")
	}
}

// Metadata alone selects; values read with JSONPath need the whole object,
// and without it are reported, not guessed.
func TestEvaluateMetadataOnly(t *testing.T) {
	target := rulestest.Compile(t, "rules:\n- name: a\n  resources: [configmaps]\n  selector: app=web\n  annotations: {a: \"1\", owner: {jsonPath: '{.spec.owner}'}}\n", served...).SortedTargets()[0]
	meta := &metav1.ObjectMeta{Namespace: "x", Name: "y", Labels: map[string]string{"app": "web"}}
	ev := target.Evaluate(meta, nil)
	if want := map[string]string{"a": "1"}; !reflect.DeepEqual(ev.Annotations, want) {
		t.Errorf("annotations %v, want %v", ev.Annotations, want)
	}
	if len(ev.Problems) != 1 || !strings.Contains(ev.Problems[0], "only the metadata") {
		t.Errorf("problems %v, want one saying the object's content is not cached", ev.Problems)
	}
	if ev := target.Evaluate(obj("x", "y", map[string]string{"app": "web"}), nil); ev.Annotations["owner"] != "ops" || len(ev.Problems) != 0 {
		t.Errorf("whole object: annotations %v, problems %v; want owner=ops", ev.Annotations, ev.Problems)
	}
}
