package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// project returns what the cache keeps of an object's annotations and
// labels: the keys keep names, and those manager owns in own, the
// object's managedFields entries of manager — so that they can be deleted
// once no rule wants them. A nil or whole keep keeps every key. What the
// rules decide on the result is what they decide on the whole object.
func project(anns, lbls map[string]string, keep *rules.Projection, own []metav1.ManagedFieldsEntry, manager string) (map[string]string, map[string]string) {
	if keep == nil || keep.Whole {
		return anns, lbls
	}
	var owned *patch.Owned
	ownedKeys := func() *patch.Owned {
		if owned == nil {
			o := patch.OwnedBy(own, manager)
			owned = &o
		}
		return owned
	}
	return keepKeys(anns, keep.Annotations, func() map[string]bool { return ownedKeys().Annotations }),
		keepKeys(lbls, keep.Labels, func() map[string]bool { return ownedKeys().Labels })
}

// keepKeys returns the entries of m whose key is named or owned: m itself
// when that is every entry. owned is called only when m has a key that is
// not named.
func keepKeys(m map[string]string, named sets.Set[string], owned func() map[string]bool) map[string]string {
	n := 0
	for k := range m {
		if named.Has(k) {
			n++
		}
	}
	if n == len(m) {
		return m
	}
	own := owned()
	var out map[string]string
	for k, v := range m {
		if named.Has(k) || own[k] {
			if out == nil {
				out = make(map[string]string, n+len(own))
			}
			out[k] = v
		}
	}
	return out
}

// cannotServe reports whether the cache of ri lacks what t's rules need:
// keys, or whole objects, its projection did not keep, or the index by
// namespace that a namespaceSelector needs. It must then be built again,
// listing every object. A cache of whole objects cannot serve rules that
// need only metadata either: it would keep them whole. A cache that keeps
// more than t needs serves t as it is: the keys no rule needs any more go
// when it is next built.
func (ri *resourceInformer) cannotServe(t *rules.Target) bool {
	p := t.Projection()
	return ri.projection.Whole != p.Whole || !ri.projection.Covers(p) || t.NeedsNamespaceLabels && !ri.byNamespace
}

// namespaceIndex returns the indexers of a resource's informer: by
// namespace when needed, for the namespace informer to find the objects of
// a namespace whose labels changed. Other caches go without: the index
// takes some 80 bytes per object.
func namespaceIndex(needed bool) cache.Indexers {
	if !needed {
		return cache.Indexers{}
	}
	return cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
}
