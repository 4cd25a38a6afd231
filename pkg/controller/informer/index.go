package informer

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// SourceIndex is the name of the index, by the object of src each names,
// of the informers of the resources whose objects name one. Owners share
// one index, OwnerIndex.
func SourceIndex(src *source.Source) string {
	if src.IsOwner {
		return OwnerIndex
	}
	if src.IsRef {
		return refIndex(src)
	}
	return "source:" + src.Field
}

// OwnerIndex is the index of every informer by the UID of each object's
// controller owner, whatever its kind: from an owner to the objects it
// owns, and from those, in an owner's informer, to theirs.
const OwnerIndex = "owner"

// ownerIndexFunc indexes an object by the UID of its controller owner.
func ownerIndexFunc(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if ref, ok := source.ControllerOf(m); ok {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// OwnerIndexers are the indexers of the informer of a source's objects:
// by their controller owner, for owners of owners.
func OwnerIndexers() cache.Indexers { return cache.Indexers{OwnerIndex: ownerIndexFunc} }

// DependentsKey is the key, in the index SourceIndex(src), of the objects
// that name rel, an object of src: its UID for an owner, else its
// StoreKey.
func DependentsKey(src *source.Source, rel metav1.Object) string {
	if src.IsOwner {
		return string(rel.GetUID())
	}
	return StoreKey(src, rel.GetNamespace(), rel.GetName())
}

// SourceIndexers returns the indexers that the informer of t's objects
// needs for the sources: an index by the object each object names, for
// each source whose objects t's objects name — every entry of the table
// and any other source t reads. An entry's is set whether or not a rule
// reads the source now: an informer whose cache does not keep the field
// that names it indexes nothing, and one built again when a rule starts
// reading it does.
func SourceIndexers(t *rules.Target) cache.Indexers {
	out := cache.Indexers{}
	for _, src := range KnownSources(t.Sources()) {
		if !src.NamedBy(t.GVR.GroupResource(), t.Namespaced) {
			continue
		}
		if src.IsOwner {
			if src != source.Owner { // a rule reads owners: see cannotServe
				out[OwnerIndex] = ownerIndexFunc
			}
			continue
		}
		if src == source.Ref {
			continue // the entry: a rule reads each RefTo
		}
		out[SourceIndex(src)] = func(obj any) ([]string, error) {
			m, ok := obj.(metav1.Object)
			if !ok {
				return nil, nil
			}
			ns, name := src.NamedIn(m)
			if name == "" {
				return nil, nil
			}
			return []string{StoreKey(src, ns, name)}, nil
		}
	}
	return out
}

// KnownSources returns the entries of the source table and, after them,
// each of more that is not one.
func KnownSources(more []*source.Source) []*source.Source {
	return source.Union(source.All(), more)
}

// StoreKey is the key, in the informer of src and in the index by the
// object of src named, of the object of src named name by an object in
// namespace ns.
func StoreKey(src *source.Source, ns, name string) string {
	if src.Resource.Namespaced {
		return ns + "/" + name
	}
	return name
}

// Naming returns the keys, in ri's store, of the objects that name rel,
// an object of src (through the index SourceIndex(src)).
func (ri *Informer) Naming(src *source.Source, rel metav1.Object) []string {
	key := DependentsKey(src, rel)
	keys, err := ri.Informer.GetIndexer().IndexKeys(SourceIndex(src), key)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("objects of %s naming %s %s: %w", source.GVRString(ri.GVR), src.Resource.Kind, key, err))
	}
	return keys
}

// Owned returns the objects that owner owns (as their controller) in ri,
// the informer of src; none when src is no owner.
func (ri *Informer) Owned(src *source.Source, owner metav1.Object) []metav1.Object {
	if !src.IsOwner {
		return nil
	}
	objs, err := ri.Informer.GetIndexer().ByIndex(OwnerIndex, string(owner.GetUID()))
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("objects of %s owned by %s: %w", source.GVRString(ri.GVR), owner.GetUID(), err))
	}
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok {
			out = append(out, m)
		}
	}
	return out
}

// Find returns the object of src named name in namespace ns ("" for a
// cluster-scoped source) that ri, src's informer, caches, and whether it
// does; a nil ri caches none. It is shared with the cache: read only.
func (ri *Informer) Find(src *source.Source, ns, name string) (metav1.Object, bool) {
	if ri == nil {
		return nil, false
	}
	obj, ok, err := ri.Informer.GetStore().GetByKey(StoreKey(src, ns, name))
	if err != nil || !ok {
		return nil, false
	}
	m, ok := obj.(metav1.Object)
	return m, ok
}

// ownerFields are the fields the cache of an owner keeps besides every
// label and annotation: its metadata, with its own owner, and the
// selector by which it selects the objects it owns, whose labels the
// rules must not change (rules.SelectorKeys).
var ownerFields = [][]string{{"apiVersion"}, {"kind"}, {"metadata"}, {"spec", "selector"}}

// SourceKeeps returns what the cache of the objects of src keeps: all of
// their metadata (nil), and, of an owner, its selector too, and the
// fields CEL reads of it (source.Source.Keep): the whole object, when an
// expression reads all of ownerObject.
func SourceKeeps(src *source.Source) *projection.Projection {
	if src.IsRef {
		return refKeeps(src)
	}
	if !src.IsOwner {
		return nil
	}
	fields := slices.Clone(ownerFields)
	for _, p := range src.Keep {
		if len(p) == 0 {
			return &projection.Projection{Whole: true}
		}
		if !projection.KeepsPath(fields, p) {
			fields = append(fields, p)
		}
	}
	return &projection.Projection{Whole: true, Fields: fields}
}
