package objcache

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// cachedObject is an object as the cache keeps it when its rules read
// named fields of it (CEL expressions; see projection.Projection.Fields): its
// metadata as a cachedMetadata, which reconcile.Decide and the writes read
// as they are, without converting the object's managedFields on every
// sync; and the fields the rules read, in content, which CEL reads. The
// metadata in content shares the annotations and labels of the
// cachedMetadata (as map[string]string, which CEL reads as they are: only
// the keys the rules name or the controller owns, as the metadata cache
// keeps them, for CEL reads keys only by name) and has no managedFields,
// which no rule may read.
//
// It is read only, as every cached object: its content is shared with
// the cache too.
type cachedObject struct {
	cachedMetadata
	content map[string]any
}

var _ Object = (*cachedObject)(nil)

// UnstructuredContent returns the fields the cache keeps of the object;
// they are read only.
func (o *cachedObject) UnstructuredContent() map[string]any { return o.content }

// DeepCopyObject returns a copy that shares nothing with o.
func (o *cachedObject) DeepCopyObject() runtime.Object {
	md := o.cachedMetadata.DeepCopyObject().(*cachedMetadata)
	content := make(map[string]any, len(o.content))
	for k, v := range o.content {
		if k != "metadata" {
			content[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	if m, ok := o.content["metadata"].(map[string]any); ok {
		content["metadata"] = contentMetadata(m, md.labels, md.annotations, runtime.DeepCopyJSONValue)
	}
	return &cachedObject{cachedMetadata: *md, content: content}
}

// newCachedObject returns what the cache keeps of u, an object of keys' kind:
// the fields at paths (which include metadata) and its metadata as the
// metadata cache keeps it, with the annotations and labels keys keeps and
// manager's managedFields entries, values shared through shared.
func newCachedObject(manager string, u *unstructured.Unstructured, paths [][]string, keys *projector, shared *Interner) *cachedObject {
	own := ownManagedFields(u.GetManagedFields(), manager)
	var buf [32]uint64
	anns, lbls, dropped := keys.project(u.GetAnnotations(), u.GetLabels(), own, buf[:0])
	o := &cachedObject{cachedMetadata: cachedMetadata{
		proj:            shared.projected(keys, dropped),
		name:            u.GetName(),
		namespace:       shared.string(u.GetNamespace()),
		uid:             u.GetUID(),
		resourceVersion: u.GetResourceVersion(),
		labels:          shared.stringMap(lbls),
		annotations:     shared.stringMap(anns),
		managedFields:   shared.managedFields(own),
	}}
	o.content = keepFields(u.Object, paths)
	if md, ok := o.content["metadata"].(map[string]any); ok {
		o.content["metadata"] = contentMetadata(md, o.labels, o.annotations, func(v any) any { return v })
	}
	return o
}

// contentMetadata returns a copy of an object's metadata, its values
// copied with cp, without its managedFields, and with labels and
// annotations in place of its own.
func contentMetadata(md map[string]any, labels, annotations map[string]string, cp func(any) any) map[string]any {
	out := make(map[string]any, len(md))
	for k, v := range md {
		switch k {
		case "managedFields", "labels", "annotations":
		default:
			out[k] = cp(v)
		}
	}
	if labels != nil {
		out["labels"] = labels
	}
	if annotations != nil {
		out["annotations"] = annotations
	}
	return out
}

// sameCachedObject reports whether two versions of a cached object hold
// the same content and this controller's ownership record, but for their
// resourceVersion: an update that changed only fields the cache dropped.
func sameCachedObject(a, b *cachedObject) bool {
	return equality.Semantic.DeepEqual(withoutVersion(a.content), withoutVersion(b.content)) &&
		sameEntries(a, b)
}

// sameEntries reports whether a and b have the same managedFields entries
// as the cache keeps them.
func sameEntries(a, b *cachedObject) bool {
	if len(a.managedFields) != len(b.managedFields) {
		return false
	}
	for i := range a.managedFields {
		if !sameEntry(a.managedFields[i], b.managedFields[i]) {
			return false
		}
	}
	return true
}
