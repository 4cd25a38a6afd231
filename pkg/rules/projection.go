package rules

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
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
	// Owners is set when the rules read the objects' controller owners
	// (fromOwner): a metadata cache keeps each object's ownerReferences
	// entry with controller: true.
	Owners bool
}

// Projection returns what the rules of t need of its objects' annotations
// and labels. It is computed from the rules alone.
func (t *Target) Projection() Projection {
	p := t.Reads()
	for _, r := range t.Rules {
		p.Annotations.Insert(sortedKeys(r.Annotations)...)
		p.Annotations.Insert(sortedKeys(rulefile.Joined(r.AnnotationsFrom, r.AnnotationsCEL))...)
		p.Annotations.Insert(slices.Collect(maps.Keys(r.AnnotationsFromNamespace))...)
		p.Annotations.Insert(slices.Collect(maps.Keys(r.AnnotationsFromRelated))...)
		p.Labels.Insert(sortedKeys(r.Labels)...)
		p.Labels.Insert(sortedKeys(rulefile.Joined(r.LabelsFrom, r.LabelsCEL))...)
		p.Labels.Insert(slices.Collect(maps.Keys(r.LabelsFromNamespace))...)
		p.Labels.Insert(slices.Collect(maps.Keys(r.LabelsFromRelated))...)
	}
	return p
}

// Reads returns the part of Projection that the rules of t read to decide
// whether and how an object must change, without the keys they only set:
// the keys they select by or remove, and the control annotations. An
// object that lacks a key the rules only set gets that key set, whatever
// value it had: deciding without it can only find more to change.
func (t *Target) Reads() Projection {
	p := Projection{Whole: t.ReadsObjects, Fields: t.fields(), Annotations: sets.New(ControlAnnotations...), Labels: sets.New[string]()}
	for _, r := range t.Rules {
		p.Owners = p.Owners || len(r.owners) > 0
		p.Annotations.Insert(r.RemoveAnnotations...)
		p.Labels.Insert(r.RemoveLabels...)
		p.Labels.Insert(selectorKeys(r.selector)...)
		celLabels, celAnnotations := r.celKeys()
		p.Labels.Insert(celLabels...)
		p.Annotations.Insert(celAnnotations...)
		if t.isNamespaces() {
			// A Namespace is selected by its own labels, and fromNamespace
			// reads its own labels and annotations.
			p.Labels.Insert(selectorKeys(r.namespaceSelector)...)
			labelKeys, annotationKeys := r.namespaceKeys()
			p.Labels.Insert(labelKeys...)
			p.Annotations.Insert(annotationKeys...)
		}
	}
	return p
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
	keys := p.Annotations.IsSuperset(q.Annotations) && p.Labels.IsSuperset(q.Labels)
	if p.Whole {
		// Its fields include metadata, and with it the ownerReferences.
		return keys && (!q.Whole || q.Fields != nil && slices.IndexFunc(q.Fields, func(f []string) bool { return !keepsPath(p.Fields, f) }) < 0)
	}
	return !q.Whole && keys && (p.Owners || !q.Owners)
}

// fields returns the field paths the rules of t read, or nil when they
// may read any (a JSONPath value, or a CEL expression reading the whole
// object), or read none.
func (t *Target) fields() [][]string {
	if !t.ReadsObjects {
		return nil
	}
	out := [][]string{{"apiVersion"}, {"kind"}, {"metadata"}}
	for _, r := range t.Rules {
		if len(r.annotationsFrom)+len(r.labelsFrom) > 0 {
			return nil
		}
		for _, f := range r.relatedRefs() {
			if !keepsPath(out, f) {
				out = append(out, f)
			}
		}
		for _, e := range r.celExprs() {
			for _, f := range e.Reads {
				if len(f) == 0 {
					return nil
				}
				if !keepsPath(out, f) {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// keepsPath reports whether one of paths is f or a prefix of it.
func keepsPath(paths [][]string, f []string) bool {
	return slices.ContainsFunc(paths, func(p []string) bool { return len(p) <= len(f) && slices.Equal(p, f[:len(p)]) })
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
