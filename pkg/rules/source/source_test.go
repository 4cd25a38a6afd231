package source

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// configMaps is a source a test could add: a ConfigMap named by an
// object's spec.configMapName, in its namespace.
var configMaps = &Source{
	Field:    "fromConfigMap",
	Resource: Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true},
	Ref:      []string{"spec", "configMapName"},
	What:     "the ConfigMap",
}

func TestByFieldAndOrder(t *testing.T) {
	for _, tc := range []struct {
		field string
		want  *Source
	}{
		{"fromNamespace", Namespace},
		{"fromNode", Node},
		{"fromConfigMap", nil}, // not shipped: found only through the keys that name it
		{"", nil},
	} {
		if got := ByField(tc.field); got != tc.want {
			t.Errorf("ByField(%q) = %v, want %v", tc.field, got, tc.want)
		}
	}
	got := []*Source{configMaps, Node, Namespace}
	slices.SortFunc(got, Order)
	if want := []*Source{Namespace, Node, configMaps}; !slices.Equal(got, want) {
		t.Errorf("sorted = %v, want the shipped ones in table order, then the others", got)
	}
	if got := Union([]*Source{configMaps}, []*Source{Node, configMaps, Namespace}); !slices.Equal(got, []*Source{Namespace, Node, configMaps}) {
		t.Errorf("Union = %v, want each once, in Order", got)
	}
	if !slices.Equal(All(), []*Source{Namespace, Node, Owner, Ref}) || !slices.Equal(Related(), []*Source{Node, Owner, Ref}) {
		t.Errorf("All() = %v, Related() = %v", All(), Related())
	}
}

func TestRefOfAndNamedBy(t *testing.T) {
	pod := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "p", "namespace": "shop"},
		"spec":     map[string]any{"nodeName": "n1", "configMapName": "settings"},
	}}
	unscheduled := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "q", "namespace": "shop"}}}
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "shop"}}
	pods := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name string
		src  *Source
		obj  metav1.Object
		want string
	}{
		{"namespace of an object", Namespace, pod, "shop"},
		{"namespace of metadata only", Namespace, meta, "shop"},
		{"node of a scheduled Pod", Node, pod, "n1"},
		{"node of an unscheduled Pod", Node, unscheduled, ""},
		{"node of metadata only: the field is not kept", Node, meta, ""},
		{"a ConfigMap by a field", configMaps, pod, "settings"},
	} {
		if got := tc.src.RefOf(tc.obj); got != tc.want {
			t.Errorf("%s: RefOf = %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		src        *Source
		gr         schema.GroupResource
		namespaced bool
		want       bool
	}{
		{Node, pods, true, true},
		{Node, schema.GroupResource{Group: "apps", Resource: "deployments"}, true, false},
		{Namespace, schema.GroupResource{Group: "apps", Resource: "deployments"}, true, true},
		{Namespace, schema.GroupResource{Resource: "nodes"}, false, false},
	} {
		if got := tc.src.NamedBy(tc.gr, tc.namespaced); got != tc.want {
			t.Errorf("%s.NamedBy(%s, %v) = %v, want %v", tc.src.Field, tc.gr, tc.namespaced, got, tc.want)
		}
	}
}

func TestNamespacesLookup(t *testing.T) {
	shop := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}
	ns := Namespaces(func(name string) (metav1.Object, bool) { return shop, name == "shop" })
	if got, ok := NamespaceOf(ns, "shop"); !ok || got != shop {
		t.Errorf("NamespaceOf(shop) = %v, %v", got, ok)
	}
	if _, ok := ns.Find(Node, "", "shop"); ok {
		t.Error("Namespaces found a Node")
	}
	if _, ok := NamespaceOf(nil, "shop"); ok {
		t.Error("a nil Lookup found a namespace")
	}
	if _, ok := Namespaces(nil).Find(Namespace, "", "shop"); ok {
		t.Error("a nil Namespaces found a namespace")
	}
}
