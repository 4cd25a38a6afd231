package objcache

import (
	"reflect"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

func TestMetadataTransform(t *testing.T) {
	ours, theirs := fixture.Entry(reconcile.FieldManager, "b"), fixture.Entry("kubectl", "a")
	// Of our entries, what OwnedBy and RelevantUpdate read; of other
	// managers' entries nothing, but the reconcile.OtherManagers marker
	// when there is no entry of ours, so that the cache tells an object
	// with managedFields from one without.
	kept := metav1.ManagedFieldsEntry{Manager: ours.Manager, Operation: ours.Operation, FieldsType: ours.FieldsType, FieldsV1: ours.FieldsV1}
	slim := func(managedFields ...metav1.ManagedFieldsEntry) *cachedMetadata {
		return &cachedMetadata{proj: configMapsAll,
			name: "x", namespace: "ns", uid: "u-1", resourceVersion: "7",
			labels: map[string]string{"l": "1"}, annotations: map[string]string{"a": "1"}, managedFields: managedFields}
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "ns/x", Obj: fixture.Decoded()}
	tests := []struct {
		name     string
		in, want any
	}{
		{"ours and others'", fixture.Decoded(theirs, ours, fixture.Entry("kubelet"), ours), slim(kept, kept)},
		{"no entry of ours", fixture.Decoded(theirs, fixture.Entry("kubelet")), slim(otherManagersOnly...)},
		{"no managedFields", fixture.Decoded(), slim()},
		{"transformed already: passes through", slim(kept), slim(kept)},
		{"tombstone passes through", tombstone, tombstone},
		{"not metadata", "x", "x"},
	}
	cm := rulestest.ConfigMaps
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MetadataTransform(reconcile.FieldManager, cm, nil, NewInterner())(tc.in)
			if err != nil {
				t.Fatalf("MetadataTransform() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("MetadataTransform() =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
	// The strings kept are shared, not the decoder's copies.
	decodedEntry := fixture.Entry(string([]byte(reconcile.FieldManager)), "b")
	decodedEntry.Operation = metav1.ManagedFieldsOperationType([]byte("Update"))
	got, _ := MetadataTransform(reconcile.FieldManager, cm, nil, NewInterner())(fixture.Decoded(decodedEntry))
	e := got.(*cachedMetadata).managedFields[0]
	if unsafe.StringData(e.Manager) != unsafe.StringData(reconcile.FieldManager) ||
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
	ours, theirs := fixture.Owned(reconcile.FieldManager, "b")[0], fixture.Owned("kubectl", "a")[0]
	others := map[string]any{"manager": reconcile.OtherManagers}
	tests := []struct {
		name     string
		in, want any
	}{
		{"others reduced to the marker", full([]any{theirs, ours, "junk", fixture.Owned("kubelet")[0]}), full([]any{others, ours})},
		{"only others", full([]any{theirs}), full([]any{others})},
		{"no managedFields", full(nil), full(nil)},
		{"no metadata", &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}, &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}},
		{"not an object", "x", "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := WholeObjectTransform(reconcile.FieldManager)(tc.in)
			if err != nil {
				t.Fatalf("WholeObjectTransform() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("WholeObjectTransform() =\n%#v\nwant\n%#v", got, tc.want)
			}
			if u, ok := tc.in.(*unstructured.Unstructured); ok && got != any(u) {
				t.Errorf("WholeObjectTransform() returned a new object, want the input modified in place")
			}
			// An informer that streams its initial list transforms each
			// object twice; an error there would make it list instead.
			if again, err := WholeObjectTransform(reconcile.FieldManager)(got); err != nil || !reflect.DeepEqual(again, tc.want) {
				t.Errorf("WholeObjectTransform() again = %#v, %v; want it unchanged", again, err)
			}
		})
	}
}

func TestRelevantUpdate(t *testing.T) {
	cm := rulestest.ConfigMaps
	base := func(f func(m *metav1.PartialObjectMetadata)) any {
		m := fixture.Decoded(fixture.Entry("kubectl", "a"), fixture.Entry(reconcile.FieldManager, "b"))
		if f != nil {
			f(m)
		}
		out, _ := MetadataTransform(reconcile.FieldManager, cm, nil, NewInterner())(m)
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
			m.ManagedFields[0] = fixture.Entry("kubectl", "a", "c") // another manager's fields
			m.ManagedFields[1].Time = &metav1.Time{Time: metav1.Now().Add(1)}
		}), false},
		{"annotation value", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.Annotations = map[string]string{"a": "2"} }), true},
		{"annotations gone", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.Annotations = nil }), true},
		{"label added", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.Labels["m"] = "2" }), true},
		{"our fields", base(nil), base(func(m *metav1.PartialObjectMetadata) {
			m.ManagedFields[1] = fixture.Entry(reconcile.FieldManager, "b", "c")
		}), true},
		{"our entry gone", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.ManagedFields = m.ManagedFields[:1] }), true},
		{"objects: only the version", withVersion(fixture.ConfigMap("ns", "x", nil), "1", "a"), withVersion(fixture.ConfigMap("ns", "x", nil), "2", "a"), false},
		{"objects: a field kept", withVersion(fixture.ConfigMap("ns", "x", nil), "1", "a"), withVersion(fixture.ConfigMap("ns", "x", nil), "2", "b"), true},
		{"old not metadata", "x", base(nil), true},
		{"tombstone", cache.DeletedFinalStateUnknown{Obj: base(nil)}, base(nil), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RelevantUpdate(tc.old, tc.new); got != tc.want {
				t.Errorf("RelevantUpdate() = %v, want %v", got, tc.want)
			}
		})
	}
}

// withVersion sets u's resourceVersion and data.x.
func withVersion(u *unstructured.Unstructured, version, x string) *unstructured.Unstructured {
	u.SetResourceVersion(version)
	u.Object["data"] = map[string]any{"x": x}
	return u
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
		{"whole objects", fixture.ConfigMap("ns", "x", nil), fixture.ConfigMap("ns", "x", nil), true},
		{"not objects", "x", "x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsResync(tc.old, tc.new); got != tc.want {
				t.Errorf("IsResync() = %v, want %v", got, tc.want)
			}
		})
	}
}
