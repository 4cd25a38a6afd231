package source

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestNamedIn checks which object a source of RefTo finds an object
// naming, as the controller's index keys it: a reference, whether a cache
// keeps it as map[string]any or map[string]string, a name, a name the
// source is not limited to, another namespace, and none.
func TestNamedIn(t *testing.T) {
	claims := Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, Kind: "PersistentVolumeClaim", Namespaced: true}
	cms := Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}
	byRef := RefTo(claims, []string{"spec", "claimRef"}, "")
	byName := RefTo(cms, nil, "defaults")
	byField := RefTo(cms, []string{"spec", "settings"}, "team-a")
	obj := func(ns string, spec map[string]any) metav1.Object {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "o"}, "spec": spec}}
		u.SetNamespace(ns)
		return u
	}
	for _, tc := range []struct {
		name     string
		src      *Source
		obj      metav1.Object
		ns, want string
	}{
		{"a volume's claimRef", byRef, obj("", map[string]any{"claimRef": map[string]any{"namespace": "shop", "name": "data", "uid": "u"}}), "shop", "data"},
		{"a claimRef as a cache keeps it", byRef, obj("", map[string]any{"claimRef": map[string]string{"namespace": "shop", "name": "data"}}), "shop", "data"},
		{"a reference without a namespace, cluster-scoped", byRef, obj("", map[string]any{"claimRef": map[string]any{"name": "data"}}), "", ""},
		{"a reference of another kind", byRef, obj("", map[string]any{"claimRef": map[string]any{"kind": "Pod", "namespace": "shop", "name": "data"}}), "", ""},
		{"another namespace from a namespaced object", byRef, obj("web", map[string]any{"claimRef": map[string]any{"namespace": "shop", "name": "data"}}), "", ""},
		{"a name given", byName, obj("shop", nil), "shop", "defaults"},
		{"the name the source is limited to", byField, obj("shop", map[string]any{"settings": "team-a"}), "shop", "team-a"},
		{"another name", byField, obj("shop", map[string]any{"settings": "team-b"}), "", ""},
		{"none", byField, obj("shop", nil), "", ""},
	} {
		if ns, name := tc.src.NamedIn(tc.obj); ns != tc.ns || name != tc.want {
			t.Errorf("%s: NamedIn = %q, %q; want %q, %q", tc.name, ns, name, tc.ns, tc.want)
		}
	}
	if RefTo(cms, nil, "defaults") != byName || RefTo(cms, nil, "other") == byName {
		t.Error("RefTo is not one source per resource, field and name")
	}
}
