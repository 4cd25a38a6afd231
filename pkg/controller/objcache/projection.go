package objcache

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// projector is what the metadata cache of one resource keeps of its
// objects' annotations and labels.
type projector struct {
	// all keeps every key.
	all bool
	// annotations and labels are the keys the rules name, and the
	// admission marker of manager on the resource (patch.MarkerKey).
	annotations, labels sets.Set[string]
	manager, marker     string
}

// newProjector returns the projector that keeps what keep names (every
// key when keep is nil or whole) of the objects of r, and the keys manager
// owns on each.
func newProjector(keep *rules.Projection, manager string, r rules.Resource) projector {
	if keep == nil || keep.Whole {
		return projector{all: true}
	}
	p := projector{annotations: keep.Annotations.Clone(), labels: keep.Labels, manager: manager,
		marker: patch.MarkerKey(manager, r.GVR.GroupResource())}
	if p.marker != "" {
		p.annotations.Insert(p.marker)
	}
	return p
}

// project returns what the cache keeps of an object's annotations and
// labels: the keys the projector names, and those manager owns — in own,
// the object's managedFields entries of manager, or in its admission
// marker — so that they can be deleted once no rule wants them. What the
// rules decide on the result is what they decide on the whole object.
func (p projector) project(anns, lbls map[string]string, own []metav1.ManagedFieldsEntry) (map[string]string, map[string]string) {
	if p.all {
		return anns, lbls
	}
	var owned *patch.Owned
	ownedKeys := func() *patch.Owned {
		if owned == nil {
			o := patch.OwnedOrMarked(own, p.manager, anns, p.marker)
			owned = &o
		}
		return owned
	}
	return keepKeys(anns, p.annotations, func() map[string]bool { return ownedKeys().Annotations }),
		keepKeys(lbls, p.labels, func() map[string]bool { return ownedKeys().Labels })
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
