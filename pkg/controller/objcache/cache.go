package objcache

import (
	"bytes"
	"maps"
	"slices"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
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
// many objects are shared through shared. It is NewProjecting's
// Transform, for a cache whose projection never widens.
func MetadataTransform(manager string, r source.Resource, keep *projection.Projection, shared *Interner) cache.TransformFunc {
	return NewProjecting(manager, r, keep, shared).Transform
}

// Projecting is the cache transform of a metadata informer
// (MetadataTransform's), whose projection can be widened while the
// informer runs, so that a reload whose rules need more keys does not
// list every object again. Each cached object remembers which keys it
// dropped (as hashes, shared by the objects that dropped the same); one
// made before the last Widen serves rules that need a key it dropped only
// when the key was not on it (Serves).
type Projecting struct {
	manager string
	r       source.Resource
	shared  *Interner
	cur     atomic.Pointer[projector]
}

// NewProjecting returns the transform of a metadata cache of r's objects
// that keeps what keep names (every key when keep is nil) and what
// manager owns.
func NewProjecting(manager string, r source.Resource, keep *projection.Projection, shared *Interner) *Projecting {
	p := &Projecting{manager: manager, r: r, shared: shared}
	p.cur.Store(newProjector(keep, manager, r))
	return p
}

// Widen makes the transform keep what keep names from now on. The objects
// it made before are marked: Serves checks them against the rules.
func (p *Projecting) Widen(keep projection.Projection) {
	p.cur.Swap(newProjector(&keep, p.manager, p.r)).superseded.Store(true)
}

// Transform is the informer's cache transform. It is idempotent, as
// client-go needs: an informer that streams its initial list transforms
// each object twice, and what it made passes through.
func (p *Projecting) Transform(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil // a *cachedMetadata, transformed already, or a tombstone
	}
	pr := p.cur.Load()
	own := ownManagedFields(m.ManagedFields, p.manager)
	var buf [32]uint64
	anns, lbls, dropped := pr.project(m.Annotations, m.Labels, own, buf[:0])
	return &cachedMetadata{
		proj:            p.shared.projected(pr, dropped),
		name:            m.Name,
		namespace:       p.shared.string(m.Namespace),
		uid:             m.UID,
		resourceVersion: m.ResourceVersion,
		labels:          p.shared.stringMap(lbls),
		annotations:     p.shared.stringMap(anns),
		managedFields:   p.shared.managedFields(own),
		controller:      pr.controllerOf(m, p.shared),
	}, nil
}

// controllerOf returns what the cache keeps of m's controller
// ownerReferences entry: nil when the projector keeps no owners or m has
// no controller; else a copy, its apiVersion and kind shared.
func (pr *projector) controllerOf(m *metav1.PartialObjectMetadata, shared *Interner) *metav1.OwnerReference {
	if !pr.owners {
		return nil
	}
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil {
		return nil
	}
	c := true
	return &metav1.OwnerReference{APIVersion: shared.string(ref.APIVersion), Kind: shared.string(ref.Kind), Name: ref.Name, UID: ref.UID, Controller: &c}
}

// Serves reports whether the cache keeps of obj all that the rules need:
// need, called only for an object made before its cache's projection was
// last widened, tells what they need. It is false when such an object had
// a key need names, which was dropped: its value is unknown, and the
// object must be listed again. An object that lacked the key serves: the
// key is absent, as the cache says.
func Serves(obj Object, need func() projection.Projection) bool {
	o, ok := obj.(*cachedMetadata)
	if !ok || o.proj == nil || len(o.proj.dropped) == 0 || !o.proj.by.superseded.Load() {
		return true
	}
	n := need()
	return !o.proj.drops(annotationSeed, n.Annotations) && !o.proj.drops(labelSeed, n.Labels)
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
// record, or, when n was made by a projector since superseded, a change of
// the keys it dropped. An update of an object kept with its fields is relevant when
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
		!slices.EqualFunc(o.managedFields, n.managedFields, sameEntry) || droppedOther(o, n) ||
		(o.controller == nil) != (n.controller == nil) || o.controller != nil && o.controller.UID != n.controller.UID
}

// droppedOther reports whether n, made by a projector since superseded,
// dropped other keys than o: one of them may be a key the rules now read.
// (Made by the current projector, n keeps such keys, and the maps tell.)
func droppedOther(o, n *cachedMetadata) bool {
	if o.proj == n.proj || n.proj == nil || !n.proj.by.superseded.Load() {
		return false
	}
	return o.proj == nil || !slices.Equal(o.proj.dropped, n.proj.dropped)
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
