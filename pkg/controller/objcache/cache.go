// Package objcache is what the controller's informers keep of each
// object, and how: the cache transforms of metadata informers (a
// read-only *cachedMetadata with only the annotations and labels the rules
// read or the controller owns, values shared through an Interner) and of
// informers of whole objects, and the test of whether an update can change
// what the rules decide. It needs nothing from the controller.
package objcache

import (
	"bytes"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// Object is an object as the cache keeps it: a *cachedMetadata from a
// metadata informer; a *cachedObject when rules read named fields of
// objects; an *unstructured.Unstructured when they may read any.
type Object interface {
	metav1.Object
	runtime.Object
}

// MetadataTransform keeps in the cache only what the rules need of an
// object a metadata informer decoded: its identity, the annotations and
// labels keep names or this controller owns (all of them when keep is
// nil; see projector), and this controller's own managedFields entries (its ownership
// record, kept as the raw field set the API server sent), as a
// *cachedMetadata. The metadata client leaves TypeMeta empty; the cached
// object has the resource's kind, which writes and events need.
// Everything else the decoder allocated is dropped, and values equal on
// many objects are shared through shared.
//
// It is idempotent, as client-go needs: an informer that streams its
// initial list transforms each object twice, and what it made passes
// through.
func MetadataTransform(manager string, r rules.Resource, keep *rules.Projection, shared *Interner) cache.TransformFunc {
	kind := &kindOf{gvk: r.GVR.GroupVersion().WithKind(r.Kind)}
	p := newProjector(keep, manager, r)
	return func(obj any) (any, error) {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return obj, nil // a *cachedMetadata, transformed already, or a tombstone
		}
		own := ownManagedFields(m.ManagedFields, manager)
		anns, lbls := p.project(m.Annotations, m.Labels, own)
		return &cachedMetadata{
			kind:            kind,
			name:            m.Name,
			namespace:       shared.string(m.Namespace),
			uid:             m.UID,
			resourceVersion: m.ResourceVersion,
			labels:          shared.stringMap(lbls),
			annotations:     shared.stringMap(anns),
			managedFields:   shared.managedFields(own),
		}, nil
	}
}

// ownManagedFields returns what the cache keeps of an object's
// managedFields: manager's entries, with the field set the API server sent
// and the strings the decoder allocated replaced by shared ones. An object
// that has only other managers' entries gets one shared entry named
// reconcile.OtherManagers instead, which stands for them: reconcile.Decide
// must still tell an object that has managedFields from one that has
// none, as the API server tracks ownership differently for the latter.
func ownManagedFields(entries []metav1.ManagedFieldsEntry, manager string) []metav1.ManagedFieldsEntry {
	n := 0
	for i := range entries {
		if entries[i].Manager == manager {
			n++
		}
	}
	if n == 0 {
		if len(entries) == 0 {
			return nil
		}
		return otherManagersOnly
	}
	own := make([]metav1.ManagedFieldsEntry, 0, n)
	for _, e := range entries {
		if e.Manager == manager {
			own = append(own, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(shared(string(e.Operation))), FieldsType: shared(e.FieldsType), FieldsV1: e.FieldsV1})
		}
	}
	return own
}

// otherManagersOnly is the managedFields the cache keeps of every object
// whose fields only other managers own. Cached objects are read only, so
// they can all share it.
var otherManagersOnly = []metav1.ManagedFieldsEntry{{Manager: reconcile.OtherManagers}}

// shared returns the package's copy of the usual values of a
// managedFields entry's operation and fieldsType, or s.
func shared(s string) string {
	for _, c := range []string{string(metav1.ManagedFieldsOperationUpdate), string(metav1.ManagedFieldsOperationApply), "FieldsV1"} {
		if s == c {
			return c
		}
	}
	return s
}

// WholeObjectTransform is the transform of the cache of whole objects,
// kept when a rule reads values from them: it replaces other managers'
// managedFields entries, most of a typical object's metadata, with one
// entry named reconcile.OtherManagers, which tells an object that has
// managedFields from one that has none.
func WholeObjectTransform(manager string) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		md, _ := u.Object["metadata"].(map[string]any)
		entries, _ := md["managedFields"].([]any)
		var own []any
		others := false
		for _, e := range entries {
			m, ok := e.(map[string]any)
			switch {
			case !ok:
			case m["manager"] == manager:
				own = append(own, e)
			case !others:
				own = append(own, map[string]any{"manager": reconcile.OtherManagers})
				others = true
			}
		}
		if own != nil {
			md["managedFields"] = own
		} else {
			delete(md, "managedFields")
		}
		return u, nil
	}
}

// RelevantUpdate reports whether an update can change what sync decides:
// a change of the labels and annotations the cache keeps (those the rules
// read and those this controller owns) or of this controller's ownership
// record. An update of an object kept with its fields is relevant when
// what the cache keeps of it changed.
func RelevantUpdate(oldObj, newObj any) bool {
	if o, ok := oldObj.(*unstructured.Unstructured); ok {
		if n, ok := newObj.(*unstructured.Unstructured); ok {
			return !sameContent(o, n)
		}
	}
	if o, ok := oldObj.(*cachedObject); ok {
		if n, ok := newObj.(*cachedObject); ok {
			return !sameCachedObject(o, n)
		}
	}
	o, ok1 := oldObj.(*cachedMetadata)
	n, ok2 := newObj.(*cachedMetadata)
	if !ok1 || !ok2 {
		return true
	}
	return !maps.Equal(o.labels, n.labels) || !maps.Equal(o.annotations, n.annotations) ||
		!slices.EqualFunc(o.managedFields, n.managedFields, sameEntry)
}

// IsResync reports whether an update event is an informer's resync: the
// same version of the object delivered again.
func IsResync(oldObj, newObj any) bool {
	o, err1 := meta.Accessor(oldObj)
	n, err2 := meta.Accessor(newObj)
	return err1 == nil && err2 == nil && o.GetResourceVersion() == n.GetResourceVersion()
}

// sameEntry compares two managedFields entries as the cache keeps them.
func sameEntry(a, b metav1.ManagedFieldsEntry) bool {
	if a.Manager != b.Manager || a.Operation != b.Operation || (a.FieldsV1 == nil) != (b.FieldsV1 == nil) {
		return false
	}
	return a.FieldsV1 == nil || bytes.Equal(a.FieldsV1.Raw, b.FieldsV1.Raw)
}
