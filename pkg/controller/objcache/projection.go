package objcache

import (
	"hash/maphash"
	"slices"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// projector is what the metadata cache of one resource keeps of its
// objects' annotations and labels, as of the rules it was made for.
type projector struct {
	// all keeps every key.
	all bool
	// annotations and labels are the keys the rules name, and the
	// admission marker of manager on the resource (patch.MarkerKey).
	annotations, labels sets.Set[string]
	// annotationGlobs and labelGlobs match the keys the rules copy.
	annotationGlobs, labelGlobs []string
	manager, marker             string
	// owners keeps each object's controller ownerReferences entry.
	owners bool
	// kind is the kind of the resource's objects.
	kind kindOf
	// superseded is set once the cache projects with a wider projector
	// (Projecting.Widen): the objects this one made may lack the value of
	// a key the rules now read.
	superseded atomic.Bool
}

// projected is what a cached object shares with the others projected
// alike: the projector that made it, and which keys it dropped.
type projected struct {
	by *projector
	// dropped are the hashes (keyHash) of the annotations and labels by
	// dropped from the object, sorted. A key whose hash is not there was
	// not on the object; one whose hash is there may have been.
	dropped []uint64
}

// The seeds of keyHash: an annotation and a label with the same key hash
// apart.
var annotationSeed, labelSeed = maphash.MakeSeed(), maphash.MakeSeed()

// keyHash is the hash projected.dropped keeps of a key dropped from the
// annotations (seed annotationSeed) or the labels (labelSeed).
func keyHash(seed maphash.Seed, key string) uint64 { return maphash.String(seed, key) }

// drops reports whether p may have dropped one of keys (hashed with
// seed): its value is then unknown.
func (p *projected) drops(seed maphash.Seed, keys sets.Set[string]) bool {
	if len(p.dropped) == 0 {
		return false
	}
	for k := range keys {
		if _, found := slices.BinarySearch(p.dropped, keyHash(seed, k)); found {
			return true
		}
	}
	return false
}

// newProjector returns the projector that keeps what keep names (every
// key and the controller owner when keep is nil, every key when it is
// whole) of the objects of r, and the keys manager owns on each.
func newProjector(keep *projection.Projection, manager string, r source.Resource) *projector {
	kind := kindOf{gvk: r.GVR.GroupVersion().WithKind(r.Kind)}
	if keep == nil || keep.Whole {
		return &projector{all: true, owners: keep == nil, kind: kind}
	}
	p := &projector{annotations: keep.Annotations.Clone(), labels: keep.Labels, annotationGlobs: keep.AnnotationGlobs, labelGlobs: keep.LabelGlobs,
		manager: manager, owners: keep.Owners,
		marker: patch.MarkerKey(manager, r.GVR.GroupResource()), kind: kind}
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
// It appends to dropped the hashes of the keys it drops, sorted.
func (p *projector) project(anns, lbls map[string]string, own []metav1.ManagedFieldsEntry, dropped []uint64) (map[string]string, map[string]string, []uint64) {
	if p.all {
		return anns, lbls, dropped
	}
	var owned *patch.Owned
	ownedKeys := func() *patch.Owned {
		if owned == nil {
			o := patch.OwnedOrMarked(own, p.manager, anns, p.marker)
			owned = &o
		}
		return owned
	}
	keptAnns, dropped := keepKeys(anns, p.annotations, p.annotationGlobs, func() map[string]bool { return ownedKeys().Annotations }, annotationSeed, dropped)
	keptLbls, dropped := keepKeys(lbls, p.labels, p.labelGlobs, func() map[string]bool { return ownedKeys().Labels }, labelSeed, dropped)
	slices.Sort(dropped)
	return keptAnns, keptLbls, dropped
}

// keepKeys returns the entries of m whose key is named, matches one of
// globs, or is owned: m itself
// when that is every entry; and dropped with the hashes (keyHash with
// seed) of the others appended. owned is called only when m has a key
// that is not named.
func keepKeys(m map[string]string, named sets.Set[string], globs []string, owned func() map[string]bool, seed maphash.Seed, dropped []uint64) (map[string]string, []uint64) {
	n := 0
	for k := range m {
		if projection.Keeps(named, globs, k) {
			n++
		}
	}
	if n == len(m) {
		return m, dropped
	}
	own := owned()
	var out map[string]string
	for k, v := range m {
		if !projection.Keeps(named, globs, k) && !own[k] {
			dropped = append(dropped, keyHash(seed, k))
			continue
		}
		if out == nil {
			out = make(map[string]string, n+len(own))
		}
		out[k] = v
	}
	return out, dropped
}
