package rules

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Projection is what the rules of one resource need of its objects'
// annotations and labels: a cache may drop every other key, and the rules
// decide the same on what it keeps as on the whole object. It does not
// hold the keys the controller owns on an object, which the object itself
// tells (in its managedFields): a cache keeps those too, so that they can
// be deleted when no rule wants them any more.
type Projection struct {
	// Whole is set when a rule reads values from objects with JSONPath,
	// which can read any field, annotations and labels included: nothing
	// may be dropped, and the cache keeps whole objects.
	Whole bool
	// Annotations are the annotation keys the rules set or remove.
	Annotations sets.Set[string]
	// Labels are the label keys the rules set or remove, and those their
	// label selectors read: a selector reads only the keys it names (for
	// "!key" and "key notin (…)", whether the key is there).
	Labels sets.Set[string]
}

// Projection returns what the rules of t need of its objects' annotations
// and labels. It is computed from the rules alone.
func (t *Target) Projection() Projection {
	p := Projection{Whole: t.ReadsObjects, Annotations: sets.New[string](), Labels: sets.New[string]()}
	for _, r := range t.Rules {
		p.Annotations.Insert(sortedKeys(r.Annotations)...)
		p.Annotations.Insert(sortedKeys(r.AnnotationsFrom)...)
		p.Annotations.Insert(r.RemoveAnnotations...)
		p.Labels.Insert(sortedKeys(r.Labels)...)
		p.Labels.Insert(sortedKeys(r.LabelsFrom)...)
		p.Labels.Insert(r.RemoveLabels...)
		p.Labels.Insert(selectorKeys(r.selector)...)
		if t.isNamespaces() {
			// A Namespace is selected by its own labels.
			p.Labels.Insert(selectorKeys(r.namespaceSelector)...)
		}
	}
	return p
}

// Covers reports whether a cache that keeps p of every object keeps all
// that q needs, so that it can serve q's rules without listing again.
func (p Projection) Covers(q Projection) bool {
	if p.Whole {
		return true
	}
	return !q.Whole && p.Annotations.IsSuperset(q.Annotations) && p.Labels.IsSuperset(q.Labels)
}

// Equal reports whether p and q keep the same.
func (p Projection) Equal(q Projection) bool { return p.Covers(q) && q.Covers(p) }

// selectorKeys returns the label keys s reads; none for a nil selector.
func selectorKeys(s labels.Selector) []string {
	if s == nil {
		return nil
	}
	reqs, _ := s.Requirements()
	keys := make([]string, len(reqs))
	for i, r := range reqs {
		keys[i] = r.Key()
	}
	return keys
}
