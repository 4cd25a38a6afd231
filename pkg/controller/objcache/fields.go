package objcache

import (
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// ObjectTransform is the transform of the cache of objects of r whose
// rules read their fields. When keep has no Fields (a JSONPath value may
// read any field), it is WholeObjectTransform's, which keeps whole
// *unstructured.Unstructured objects. Else it keeps of each object only
// those field paths (see projection.Projection.Fields) and its metadata as the
// metadata cache keeps it, with the annotations and labels keep names or
// manager owns (every one, when keep names none: the cache of a source's
// objects), as a *cachedObject (see newCachedObject), values shared
// through shared. It is idempotent, as MetadataTransform.
func ObjectTransform(manager string, r source.Resource, keep *projection.Projection, shared *Interner) cache.TransformFunc {
	if keep.Fields == nil {
		return WholeObjectTransform(manager)
	}
	keys := newProjector(nil, manager, r)
	if keep.Annotations != nil || keep.Labels != nil {
		keys = newProjector(&projection.Projection{Annotations: keep.Annotations, Labels: keep.Labels,
			AnnotationGlobs: keep.AnnotationGlobs, LabelGlobs: keep.LabelGlobs}, manager, r)
	}
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil // a *cachedObject, transformed already, or a tombstone
		}
		return newCachedObject(manager, u, keep.Fields, keys, shared), nil
	}
}

// keepFields returns the parts of content at paths: a new map, sharing
// the values it keeps with content.
func keepFields(content map[string]any, paths [][]string) map[string]any {
	out := map[string]any{}
	for _, p := range paths {
		copyPath(out, content, p)
	}
	return out
}

// copyPath copies the value at path p of from into into, making the maps
// on the way. A value that is not a map on the way is copied whole.
func copyPath(into, from map[string]any, p []string) {
	v, ok := from[p[0]]
	if !ok {
		return
	}
	sub, isMap := v.(map[string]any)
	if len(p) == 1 || !isMap {
		into[p[0]] = v
		return
	}
	dst, ok := into[p[0]].(map[string]any)
	if !ok {
		dst = map[string]any{}
		into[p[0]] = dst
	}
	copyPath(dst, sub, p[1:])
}

// sameContent reports whether two versions of a cached object hold the
// same content but for their resourceVersion: an update that changed only
// fields the cache dropped.
func sameContent(a, b *unstructured.Unstructured) bool {
	return equality.Semantic.DeepEqual(withoutVersion(a.Object), withoutVersion(b.Object))
}

// withoutVersion returns content without metadata.resourceVersion, sharing
// the rest with it.
func withoutVersion(content map[string]any) map[string]any {
	md, ok := content["metadata"].(map[string]any)
	if !ok {
		return content
	}
	out := maps.Clone(content)
	md = maps.Clone(md)
	delete(md, "resourceVersion")
	out["metadata"] = md
	return out
}
