package controller

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// cachedMetadata are the metadata fields the cache keeps of each object:
// what selecting, planning and events need.
var cachedMetadata = []string{"name", "namespace", "uid", "resourceVersion", "labels", "annotations"}

// transform keeps in the cache only what the rules need: the object's
// identity, labels, annotations and this controller's own managedFields
// entries (its ownership record), or, when a rule reads values from
// objects, the whole object less other managers' managedFields. It runs on
// objects fresh from the decoder, before anything else can see them, so
// modifying them is safe.
func transform(manager string, wholeObjects bool) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		md, _ := u.Object["metadata"].(map[string]any)
		if md == nil {
			return obj, nil
		}
		if own := ownEntries(md["managedFields"], manager); own != nil {
			md["managedFields"] = own
		} else {
			delete(md, "managedFields")
		}
		if wholeObjects {
			return u, nil
		}
		slim := make(map[string]any, len(cachedMetadata)+1)
		for _, k := range append(cachedMetadata, "managedFields") {
			if v, ok := md[k]; ok {
				slim[k] = v
			}
		}
		u.Object = map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": slim}
		return u, nil
	}
}

// ownEntries returns the managedFields entries of manager, plus a stub of
// the first other manager's entry (its name only) so that the cache still
// tells an object that has managedFields from one that has none: the API
// server tracks ownership differently for the latter (patch.Requests).
func ownEntries(managedFields any, manager string) []any {
	entries, _ := managedFields.([]any)
	var own []any
	stub := false
	for _, e := range entries {
		m, ok := e.(map[string]any)
		switch {
		case !ok:
		case m["manager"] == manager:
			own = append(own, e)
		case !stub:
			own = append(own, map[string]any{"manager": m["manager"]})
			stub = true
		}
	}
	return own
}

// relevantUpdate reports whether an update can change what sync decides:
// a change of annotations, labels or this controller's ownership record,
// or any change at all when rules read values from objects.
func relevantUpdate(oldObj, newObj any, wholeObjects bool) bool {
	o, ok1 := oldObj.(*unstructured.Unstructured)
	n, ok2 := newObj.(*unstructured.Unstructured)
	if !ok1 || !ok2 || wholeObjects {
		return true
	}
	for _, f := range []string{"annotations", "labels", "managedFields"} {
		if !reflect.DeepEqual(metadataField(o, f), metadataField(n, f)) {
			return true
		}
	}
	return false
}

// metadataField returns metadata.<name> without copying; callers must not
// modify the result.
func metadataField(u *unstructured.Unstructured, name string) any {
	md, _ := u.Object["metadata"].(map[string]any)
	return md[name]
}

// stringMap returns metadata.<name> as a map without copying.
func stringMap(u *unstructured.Unstructured, name string) map[string]any {
	m, _ := metadataField(u, name).(map[string]any)
	return m
}
