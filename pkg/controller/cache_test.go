package controller

import (
	"reflect"
	"testing"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// entry returns a managedFields entry in which manager owns the
// annotation keys, as the metadata client decodes it.
func entry(manager string, keys ...string) metav1.ManagedFieldsEntry {
	raw := `{"f:metadata":{"f:annotations":{`
	for i, k := range keys {
		if i > 0 {
			raw += ","
		}
		raw += `"f:` + k + `":{}`
	}
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		Time: &metav1.Time{}, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(raw + "}}}")}}
}

// decoded returns a ConfigMap's metadata as a metadata informer decodes
// it: everything the API server sends, and no TypeMeta.
func decoded(managedFields ...metav1.ManagedFieldsEntry) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "x", Namespace: "ns", UID: "u-1", ResourceVersion: "7", Generation: 2,
		CreationTimestamp: metav1.Now(), Finalizers: []string{"f"},
		Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"a": "1"},
		OwnerReferences: []metav1.OwnerReference{{Name: "owner"}},
		ManagedFields:   managedFields,
	}}
}

func TestMetadataTransform(t *testing.T) {
	ours, theirs := entry(DefaultFieldManager, "b"), entry("kubectl", "a")
	// Of our entries, what OwnedBy and relevantUpdate read; of other
	// managers' entries nothing, but a stub when there is no entry of ours,
	// so that the cache tells an object with managedFields from one without.
	kept := metav1.ManagedFieldsEntry{Manager: ours.Manager, Operation: ours.Operation, FieldsType: ours.FieldsType, FieldsV1: ours.FieldsV1}
	slim := func(managedFields ...metav1.ManagedFieldsEntry) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "u-1", ResourceVersion: "7",
				Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"a": "1"}, ManagedFields: managedFields},
		}
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "ns/x", Obj: decoded()}
	tests := []struct {
		name     string
		in, want any
	}{
		{"ours and others'", decoded(theirs, ours, entry("kubelet"), ours), slim(kept, kept)},
		{"no entry of ours", decoded(theirs, entry("kubelet")), slim(otherManagersOnly...)},
		{"no managedFields", decoded(), slim()},
		{"tombstone passes through", tombstone, tombstone},
		{"not metadata", "x", "x"},
	}
	cm := rules.Resource{GVR: configMaps, Kind: "ConfigMap", Namespaced: true}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := metadataTransform(DefaultFieldManager, cm)(tc.in)
			if err != nil {
				t.Fatalf("metadataTransform() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("metadataTransform() =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
	// The strings kept are shared, not the decoder's copies.
	decodedEntry := entry(string([]byte(DefaultFieldManager)), "b")
	decodedEntry.Operation = metav1.ManagedFieldsOperationType([]byte("Update"))
	got, _ := metadataTransform(DefaultFieldManager, cm)(decoded(decodedEntry))
	e := got.(*metav1.PartialObjectMetadata).ManagedFields[0]
	if unsafe.StringData(e.Manager) != unsafe.StringData(DefaultFieldManager) ||
		unsafe.StringData(string(e.Operation)) != unsafe.StringData(string(metav1.ManagedFieldsOperationUpdate)) {
		t.Errorf("the cached entry keeps the decoder's strings, want shared ones")
	}
}

func TestWholeObjectTransform(t *testing.T) {
	full := func(managedFields []any) *unstructured.Unstructured {
		md := map[string]any{"name": "x", "namespace": "ns", "generation": int64(2), "annotations": map[string]any{"a": "1"}}
		if managedFields != nil {
			md["managedFields"] = managedFields
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": md,
			"data": map[string]any{"k": "v"}, "status": map[string]any{"phase": "x"},
		}}
	}
	ours, theirs := owned(DefaultFieldManager, "b")[0], owned("kubectl", "a")[0]
	stub := map[string]any{"manager": "kubectl"}
	tests := []struct {
		name     string
		in, want any
	}{
		{"others reduced to a stub", full([]any{theirs, ours, "junk", owned("kubelet")[0]}), full([]any{stub, ours})},
		{"only others", full([]any{theirs}), full([]any{stub})},
		{"no managedFields", full(nil), full(nil)},
		{"no metadata", &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}, &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}},
		{"not an object", "x", "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := wholeObjectTransform(DefaultFieldManager)(tc.in)
			if err != nil {
				t.Fatalf("wholeObjectTransform() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("wholeObjectTransform() =\n%#v\nwant\n%#v", got, tc.want)
			}
			if u, ok := tc.in.(*unstructured.Unstructured); ok && got != any(u) {
				t.Errorf("wholeObjectTransform() returned a new object, want the input modified in place")
			}
		})
	}
}

func TestRelevantUpdate(t *testing.T) {
	cm := rules.Resource{GVR: configMaps, Kind: "ConfigMap", Namespaced: true}
	base := func(f func(m *metav1.PartialObjectMetadata)) any {
		m := decoded(entry("kubectl", "a"), entry(DefaultFieldManager, "b"))
		if f != nil {
			f(m)
		}
		out, _ := metadataTransform(DefaultFieldManager, cm)(m)
		return out
	}
	tests := []struct {
		name     string
		old, new any
		want     bool
	}{
		{"nothing that matters", base(nil), base(func(m *metav1.PartialObjectMetadata) {
			m.ResourceVersion = "8"
			m.Generation = 3
			m.ManagedFields[0] = entry("kubectl", "a", "c") // another manager's fields
			m.ManagedFields[1].Time = &metav1.Time{Time: metav1.Now().Add(1)}
		}), false},
		{"annotation value", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.Annotations = map[string]string{"a": "2"} }), true},
		{"annotations gone", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.Annotations = nil }), true},
		{"label added", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.Labels["m"] = "2" }), true},
		{"our fields", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.ManagedFields[1] = entry(DefaultFieldManager, "b", "c") }), true},
		{"our entry gone", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.ManagedFields = m.ManagedFields[:1] }), true},
		{"whole objects", configMap("ns", "x", nil), configMap("ns", "x", nil), true},
		{"old not metadata", "x", base(nil), true},
		{"tombstone", cache.DeletedFinalStateUnknown{Obj: base(nil)}, base(nil), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := relevantUpdate(tc.old, tc.new); got != tc.want {
				t.Errorf("relevantUpdate() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsResync(t *testing.T) {
	at := func(rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", ResourceVersion: rv}}
	}
	tests := []struct {
		name     string
		old, new any
		want     bool
	}{
		{"same version again", at("7"), at("7"), true},
		{"newer version", at("7"), at("8"), false},
		{"whole objects", configMap("ns", "x", nil), configMap("ns", "x", nil), true},
		{"not objects", "x", "x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isResync(tc.old, tc.new); got != tc.want {
				t.Errorf("isResync() = %v, want %v", got, tc.want)
			}
		})
	}
}

// An update that brings the same version again is a resync, enqueued only
// when resyncs are on; without them it comes from a relist, and the object
// has not changed.
func TestHandlerSameVersion(t *testing.T) {
	cm := rules.Resource{GVR: configMaps, Kind: "ConfigMap", Namespaced: true}
	obj, _ := metadataTransform(DefaultFieldManager, cm)(decoded(entry(DefaultFieldManager, "a")))
	for _, tc := range []struct {
		resync time.Duration
		want   int
	}{{0, 0}, {time.Hour, 1}} {
		c := newController(newClient(), Options{ResyncPeriod: tc.resync})
		t.Cleanup(c.queue.ShutDown)
		c.handlerFor(klog.Background(), configMaps).OnUpdate(obj, obj)
		if got := c.queue.Len(); got != tc.want {
			t.Errorf("--resync-period %v: %d keys queued, want %d", tc.resync, got, tc.want)
		}
	}
}
