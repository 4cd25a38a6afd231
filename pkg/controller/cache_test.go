package controller

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// full returns a ConfigMap as the API server sends it: spec-like data,
// status and the metadata the cache does not need, and managedFields
// entries of kubectl and of the controller.
func full() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": "x", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
			"generation": int64(2), "creationTimestamp": "2026-01-01T00:00:00Z",
			"labels": map[string]any{"l": "1"}, "annotations": map[string]any{"a": "1"},
			"ownerReferences": []any{map[string]any{"name": "owner"}},
			"managedFields":   append(owned("kubectl", "a"), owned(DefaultFieldManager, "b")...),
		},
		"data":   map[string]any{"k": "v"},
		"status": map[string]any{"phase": "x"},
	}}
}

func TestTransform(t *testing.T) {
	// Of other managers' entries, only the first one's name is kept: the
	// cache must tell an object with managedFields from one without.
	stub := map[string]any{"manager": "kubectl"}
	kept := append([]any{stub}, owned(DefaultFieldManager, "b")...)
	slim := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": "x", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
			"labels": map[string]any{"l": "1"}, "annotations": map[string]any{"a": "1"},
			"managedFields": kept,
		},
	}}
	whole := full()
	whole.Object["metadata"].(map[string]any)["managedFields"] = kept
	notOwned := full()
	notOwned.Object["metadata"].(map[string]any)["managedFields"] = owned("kubectl", "a")
	notOwnedWant := slim.DeepCopy()
	notOwnedWant.Object["metadata"].(map[string]any)["managedFields"] = []any{stub}
	untracked := full()
	delete(untracked.Object["metadata"].(map[string]any), "managedFields")
	untrackedWant := slim.DeepCopy()
	delete(untrackedWant.Object["metadata"].(map[string]any), "managedFields")
	tombstone := cache.DeletedFinalStateUnknown{Key: "ns/x", Obj: full()}

	tests := []struct {
		name         string
		wholeObjects bool
		in, want     any
	}{
		{"metadata only", false, full(), slim},
		{"whole object, other managers reduced to a stub", true, full(), whole},
		{"no entry of ours", false, notOwned, notOwnedWant},
		{"no managedFields", false, untracked, untrackedWant},
		{"no metadata", false, &unstructured.Unstructured{Object: map[string]any{"kind": "X", "spec": "s"}},
			&unstructured.Unstructured{Object: map[string]any{"kind": "X", "spec": "s"}}},
		{"tombstone passes through", false, tombstone, cache.DeletedFinalStateUnknown{Key: "ns/x", Obj: full()}},
		{"not an object", false, "x", "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := transform(DefaultFieldManager, tc.wholeObjects)(tc.in)
			if err != nil {
				t.Fatalf("transform() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("transform() =\n%#v\nwant\n%#v", got, tc.want)
			}
			if u, ok := tc.in.(*unstructured.Unstructured); ok && got != any(u) {
				t.Errorf("transform() returned a new object, want the input modified in place")
			}
		})
	}
}

func TestOwnEntries(t *testing.T) {
	ours := owned(DefaultFieldManager, "a")[0]
	theirs := owned("kubectl", "a")[0]
	stub := map[string]any{"manager": "kubectl"}
	tests := []struct {
		name string
		in   any
		want []any
	}{
		{"none", nil, nil},
		{"not a list", "x", nil},
		{"empty", []any{}, nil},
		{"only others: a stub of the first", []any{theirs, owned("kubelet")[0]}, []any{stub}},
		{"ours among others", []any{ours, theirs, "junk", ours, theirs}, []any{ours, stub, ours}},
		{"only ours", []any{ours}, []any{ours}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ownEntries(tc.in, DefaultFieldManager); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ownEntries() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRelevantUpdate(t *testing.T) {
	base := func() *unstructured.Unstructured {
		u := configMap("ns", "x", map[string]string{"a": "1"})
		u.SetLabels(map[string]string{"l": "1"})
		return u
	}
	with := func(f func(u *unstructured.Unstructured)) *unstructured.Unstructured {
		u := base()
		f(u)
		return u
	}
	tests := []struct {
		name         string
		old, new     any
		wholeObjects bool
		want         bool
	}{
		{"nothing that matters", base(), with(func(u *unstructured.Unstructured) {
			u.SetResourceVersion("2")
			u.Object["data"] = map[string]any{"k": "v"}
		}), false, false},
		{"annotation value", base(), with(func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"a": "2"}) }), false, true},
		{"annotations gone", base(), with(func(u *unstructured.Unstructured) { u.SetAnnotations(nil) }), false, true},
		{"label added", base(), with(func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"l": "1", "m": "2"}) }), false, true},
		{"ownership", base(), with(func(u *unstructured.Unstructured) {
			u.Object["metadata"].(map[string]any)["managedFields"] = owned(DefaultFieldManager, "a")
		}), false, true},
		{"rules read objects", base(), with(func(u *unstructured.Unstructured) { u.Object["data"] = "x" }), true, true},
		{"old not unstructured", "x", base(), false, true},
		{"tombstone", cache.DeletedFinalStateUnknown{Obj: base()}, base(), false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := relevantUpdate(tc.old, tc.new, tc.wholeObjects); got != tc.want {
				t.Errorf("relevantUpdate() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStringMap(t *testing.T) {
	ann := map[string]any{"a": "1"}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want map[string]any
	}{
		{"no object", &unstructured.Unstructured{}, nil},
		{"no metadata", &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}, nil},
		{"metadata not a map", &unstructured.Unstructured{Object: map[string]any{"metadata": "x"}}, nil},
		{"absent", &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{}}}, nil},
		{"not a map", &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"annotations": "a=1"}}}, nil},
		{"present", &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"annotations": ann}}}, ann},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := stringMap(tc.obj, "annotations")
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("stringMap() = %v, want %v", got, tc.want)
			}
			if tc.want != nil && reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(tc.want).UnsafePointer() {
				t.Errorf("stringMap() returned a copy, want the object's own map")
			}
		})
	}
}
