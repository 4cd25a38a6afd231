package objcache

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/reference"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
)

func cachedConfigMap() *cachedMetadata {
	return &cachedMetadata{proj: configMapsAll,
		name: "x", namespace: "ns", uid: "u-1", resourceVersion: "7",
		labels: map[string]string{"l": "1"}, annotations: map[string]string{"a": "1"},
		managedFields: []metav1.ManagedFieldsEntry{fixture.Entry("kube-annotator", "a")}}
}

// What events and writes read of a cached object is there.
func TestCachedMetadataReads(t *testing.T) {
	o := cachedConfigMap()
	ref, err := reference.GetReference(runtime.NewScheme(), o)
	if err != nil {
		t.Fatalf("GetReference() error = %v", err)
	}
	want := &corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: "ns", Name: "x", UID: "u-1", ResourceVersion: "7"}
	if !reflect.DeepEqual(ref, want) {
		t.Errorf("GetReference() = %+v, want %+v", ref, want)
	}
	m, err := meta.Accessor(o)
	if err != nil || m.GetAnnotations()["a"] != "1" || m.GetLabels()["l"] != "1" || len(m.GetManagedFields()) != 1 {
		t.Errorf("meta.Accessor() = %v, %v; want the cached annotations, labels and managedFields", m, err)
	}
	if m.GetGeneration() != 0 || m.GetFinalizers() != nil || m.GetOwnerReferences() != nil || m.GetDeletionTimestamp() != nil {
		t.Errorf("fields the cache does not keep read as set")
	}
}

// Setters panic: objects in a cache are never modified.
func TestCachedMetadataIsReadOnly(t *testing.T) {
	o := cachedConfigMap()
	for name, set := range map[string]func(){
		"SetAnnotations":      func() { o.SetAnnotations(nil) },
		"SetLabels":           func() { o.SetLabels(nil) },
		"SetResourceVersion":  func() { o.SetResourceVersion("8") },
		"SetManagedFields":    func() { o.SetManagedFields(nil) },
		"SetGroupVersionKind": func() { o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Kind: "Secret"}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			set()
		})
	}
	if !reflect.DeepEqual(o, cachedConfigMap()) {
		t.Errorf("the object changed")
	}
}

func TestCachedMetadataDeepCopy(t *testing.T) {
	o := cachedConfigMap()
	c := o.DeepCopyObject().(*cachedMetadata)
	if !reflect.DeepEqual(c, o) {
		t.Fatalf("DeepCopyObject() = %+v, want %+v", c, o)
	}
	c.annotations["a"] = "2"
	c.labels["l"] = "2"
	c.managedFields[0].FieldsV1.Raw[0] = 'X'
	if !reflect.DeepEqual(o, cachedConfigMap()) {
		t.Errorf("changing the copy changed the original")
	}
}

// configMapsAll is how a cache that keeps every key (and the controller
// owner) projects ConfigMaps.
var configMapsAll = &projected{by: &projector{all: true, owners: true, kind: kindOf{gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}}}
