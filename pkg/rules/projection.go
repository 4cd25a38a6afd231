package rules

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Projection returns what the rules of t need of its objects' annotations
// and labels. It is computed from the rules alone.
func (t *Target) Projection() projection.Projection {
	p := t.Reads()
	for _, r := range t.Rules {
		p.Annotations.Insert(slices.Collect(maps.Keys(r.Annotations.Values))...)
		p.Annotations.Insert(slices.Collect(maps.Keys(r.Annotations.Computed()))...)
		p.Labels.Insert(slices.Collect(maps.Keys(r.Labels.Values))...)
		p.Labels.Insert(slices.Collect(maps.Keys(r.Labels.Computed()))...)
		for _, set := range r.Annotations.Copy {
			p.AnnotationGlobs = union(p.AnnotationGlobs, copiedKeys(set))
		}
		for _, set := range r.Labels.Copy {
			p.LabelGlobs = union(p.LabelGlobs, copiedKeys(set))
		}
	}
	return p
}

// Reads returns the part of Projection that the rules of t read to decide
// whether and how an object must change, without the keys they only set:
// the keys they select by or remove, and the control annotations. An
// object that lacks a key the rules only set gets that key set, whatever
// value it had: deciding without it can only find more to change.
func (t *Target) Reads() projection.Projection {
	p := projection.Projection{Whole: t.ReadsObjects, Fields: t.fields(), Annotations: sets.New(ControlAnnotations...), Labels: sets.New[string]()}
	for _, r := range t.Rules {
		p.Owners = p.Owners || len(r.owners) > 0
		p.Annotations.Insert(r.Annotations.Remove...)
		p.Labels.Insert(r.Labels.Remove...)
		p.Labels.Insert(selectorKeys(r.sel.Selector)...)
		celLabels, celAnnotations := r.celKeys()
		p.Labels.Insert(celLabels...)
		p.Annotations.Insert(celAnnotations...)
		if t.isNamespaces() {
			// A Namespace is selected by its own labels, and fromNamespace
			// reads its own labels and annotations.
			p.Labels.Insert(selectorKeys(r.sel.NamespaceSelector)...)
			labelKeys, annotationKeys := r.namespaceKeys()
			p.Labels.Insert(labelKeys...)
			p.Annotations.Insert(annotationKeys...)
		}
	}
	return p
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
		if r.readsFields() {
			return nil
		}
		for _, f := range r.relatedRefs() {
			if !projection.KeepsPath(out, f) {
				out = append(out, f)
			}
		}
		for _, e := range r.celExprs() {
			for _, f := range e.Reads {
				if len(f) == 0 {
					return nil
				}
				if !projection.KeepsPath(out, f) {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

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

// union returns the strings of a and b, sorted, each once.
func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// copiedKeys returns the globs of the keys set may copy: every key, for
// one computed in CEL.
func copiedKeys(set spec.KeySet) []string {
	if set.CEL != "" {
		return []string{"*"}
	}
	return set.Keys
}
