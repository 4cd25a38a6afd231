package projection

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kube-annotator/kube-annotator/pkg/glob"
)

// Projection is what the rules of one resource need of its objects'
// annotations and labels: a cache may drop every other key, and the rules
// decide the same on what it keeps as on the whole object. It does not
// hold the keys the controller owns on an object, which the object itself
// tells (in its managedFields, or in an admission marker): a cache keeps
// those too, and the marker, so that they can be deleted when no rule
// wants them any more.
type Projection struct {
	// Whole is set when a rule reads values from objects with JSONPath,
	// which can read any field, annotations and labels included: nothing
	// may be dropped, and the cache keeps whole objects.
	Whole bool
	// Fields are, when Whole is set, the paths of the fields the rules
	// read (each a list of field names from the object's root, as CEL's
	// AST tells them): a cache may drop every other field but apiVersion,
	// kind and metadata. Nil keeps every field, as JSONPath can read any.
	Fields [][]string
	// Annotations are the annotation keys the rules set or remove, and
	// the ControlAnnotations, which every object may carry.
	Annotations sets.Set[string]
	// Labels are the label keys the rules set or remove, and those their
	// label selectors read: a selector reads only the keys it names (for
	// "!key" and "key notin (…)", whether the key is there).
	Labels sets.Set[string]
	// AnnotationGlobs and LabelGlobs are globs of keys (glob.MatchKey)
	// the rules copy (a copy's key sets): a cache keeps every key that
	// matches one, besides those named, so that a value another field
	// manager set is seen, and kept.
	AnnotationGlobs, LabelGlobs []string
	// Owners is set when the rules read the objects' controller owners
	// (fromOwner): a metadata cache keeps each object's ownerReferences
	// entry with controller: true.
	Owners bool
}

// Covers reports whether a cache that keeps p of every object keeps all
// that q needs, so that it can serve q's rules without listing again.
//
// A cache of whole objects keeps everything; one of the fields read keeps,
// as a metadata cache does, only the annotations and labels p names.
func (p Projection) Covers(q Projection) bool {
	if p.Whole && p.Fields == nil {
		return true
	}
	keys := keepsAll(p.Annotations, p.AnnotationGlobs, q.Annotations, q.AnnotationGlobs) && keepsAll(p.Labels, p.LabelGlobs, q.Labels, q.LabelGlobs)
	if p.Whole {
		// Its fields include metadata, and with it the ownerReferences.
		return keys && (!q.Whole || q.Fields != nil && slices.IndexFunc(q.Fields, func(f []string) bool { return !KeepsPath(p.Fields, f) }) < 0)
	}
	return !q.Whole && keys && (p.Owners || !q.Owners)
}

// KeepsPath reports whether one of paths is f or a prefix of it.
func KeepsPath(paths [][]string, f []string) bool {
	return slices.ContainsFunc(paths, func(p []string) bool { return len(p) <= len(f) && slices.Equal(p, f[:len(p)]) })
}

// Equal reports whether p and q keep the same.
func (p Projection) Equal(q Projection) bool { return p.Covers(q) && q.Covers(p) }

// Keeps reports whether a cache keeping the keys named and those matching
// globs keeps key.
func Keeps(named sets.Set[string], globs []string, key string) bool {
	return named.Has(key) || slices.ContainsFunc(globs, func(g string) bool { return glob.MatchKey(g, key) })
}

// keepsAll reports whether a cache keeping the keys named and those
// matching globs keeps each key that wants names, and each of its globs.
func keepsAll(named sets.Set[string], globs []string, wants sets.Set[string], wantGlobs []string) bool {
	for k := range wants {
		if !Keeps(named, globs, k) {
			return false
		}
	}
	for _, g := range wantGlobs {
		if !slices.Contains(globs, g) {
			return false
		}
	}
	return true
}
