package controller

import (
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

func TestMetadataTransform(t *testing.T) {
	ours, theirs := entry(reconcile.FieldManager, "b"), entry("kubectl", "a")
	// Of our entries, what OwnedBy and relevantUpdate read; of other
	// managers' entries nothing, but the reconcile.OtherManagers marker
	// when there is no entry of ours, so that the cache tells an object
	// with managedFields from one without.
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
			got, err := metadataTransform(reconcile.FieldManager, cm)(tc.in)
			if err != nil {
				t.Fatalf("metadataTransform() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("metadataTransform() =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
	// The strings kept are shared, not the decoder's copies.
	decodedEntry := entry(string([]byte(reconcile.FieldManager)), "b")
	decodedEntry.Operation = metav1.ManagedFieldsOperationType([]byte("Update"))
	got, _ := metadataTransform(reconcile.FieldManager, cm)(decoded(decodedEntry))
	e := got.(*metav1.PartialObjectMetadata).ManagedFields[0]
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
	ours, theirs := owned(reconcile.FieldManager, "b")[0], owned("kubectl", "a")[0]
	others := map[string]any{"manager": reconcile.OtherManagers}
	tests := []struct {
		name     string
		in, want any
	}{
		{"others reduced to the marker", full([]any{theirs, ours, "junk", owned("kubelet")[0]}), full([]any{others, ours})},
		{"only others", full([]any{theirs}), full([]any{others})},
		{"no managedFields", full(nil), full(nil)},
		{"no metadata", &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}, &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}},
		{"not an object", "x", "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := wholeObjectTransform(reconcile.FieldManager)(tc.in)
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

// TestCachedDecidesAsWhole checks that what either cache keeps of an
// object gets the decision the whole object gets, as once and diff see it.
func TestCachedDecidesAsWhole(t *testing.T) {
	const (
		literal = "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1', b: '2'}, labels: {l: x}}\n"
		reads   = "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1', b: {jsonPath: '{.data.b}'}}, labels: {l: x}}\n"
	)
	anns := map[string]string{"a": "0", "b": "2", "stale": "s", "user": "u"}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{"no managedFields", untracked("ConfigMap", "ns", "x", anns)},
		{"others only", configMap("ns", "x", anns)},
		{"ours only", withOwned(untracked("ConfigMap", "ns", "x", anns), reconcile.FieldManager, "a", "stale")},
		{"ours and others", withOwned(withOwned(configMap("ns", "x", anns), "kubectl", "user"), reconcile.FieldManager, "a", "stale")},
		{"another manager owns what we set", withOwned(configMap("ns", "x", anns), "kubectl", "a", "stale")},
	}
	for _, rulesYAML := range []string{literal, reads} {
		tg := compile(t, rulesYAML).Targets[configMaps]
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s, whole objects cached: %v", tc.name, tg.ReadsObjects), func(t *testing.T) {
				tc.obj.Object["data"] = map[string]any{"b": "2"}
				want, err := reconcile.Decide(tg, tc.obj, nil, nil, reconcile.FieldManager)
				if err != nil {
					t.Fatal(err)
				}
				got, err := reconcile.Decide(tg, asCached(t, tg, tc.obj.DeepCopy()).(patch.Object), nil, nil, reconcile.FieldManager)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Change, want.Change) || !reflect.DeepEqual(got.Requests, want.Requests) {
					t.Errorf("cached object: %v %v\nwhole object: %v %v", describe(got.Change), got.Requests, describe(want.Change), want.Requests)
				}
			})
		}
	}
}

func TestRelevantUpdate(t *testing.T) {
	cm := rules.Resource{GVR: configMaps, Kind: "ConfigMap", Namespaced: true}
	base := func(f func(m *metav1.PartialObjectMetadata)) any {
		m := decoded(entry("kubectl", "a"), entry(reconcile.FieldManager, "b"))
		if f != nil {
			f(m)
		}
		out, _ := metadataTransform(reconcile.FieldManager, cm)(m)
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
		{"our fields", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.ManagedFields[1] = entry(reconcile.FieldManager, "b", "c") }), true},
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
	obj, _ := metadataTransform(reconcile.FieldManager, cm)(decoded(entry(reconcile.FieldManager, "a")))
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
