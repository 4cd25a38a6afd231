package rules

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Sources returns the sources the controller must watch for the objects
// of t: the namespace where a namespaced object may opt out or a rule
// selects Namespaces by their labels (NeedsNamespaces), and each source
// a rule reads values from. They are found once, when t is compiled (a
// target made otherwise, such as a prune's, finds them at each call); the
// slice is shared: read only.
func (t *Target) Sources() []*source.Source {
	if t.sources != nil {
		return t.sources
	}
	return t.neededSources()
}

// neededSources computes Sources: never nil, so that Compile's result,
// kept in t.sources, is not computed again on every sync when empty.
func (t *Target) neededSources() []*source.Source {
	out := []*source.Source{}
	if t.NeedsNamespaces() {
		out = append(out, source.Namespace)
	}
	return append(out, t.RelatedSources()...)
}

// SourceChangeMatters reports whether a change of an object of src from
// old to new can change what the rules of t want of the objects that
// name it: for a namespace, opting in or out, or a change of its labels
// when a rule selects by them, or of a key a rule reads; for any other
// source, a change of a key a rule reads.
func (t *Target) SourceChangeMatters(src *source.Source, old, new metav1.Object) bool {
	if src == source.Namespace {
		return OptsOut(old.GetAnnotations()) != OptsOut(new.GetAnnotations()) || t.NamespaceChangeMatters(old, new) || t.copyChanged(src, old, new)
	}
	if src.IsOwner {
		a, _ := source.ControllerOf(old)
		b, _ := source.ControllerOf(new)
		if a.UID != b.UID || src.KeptChanged(old, new) {
			return true
		}
	}
	if t.copyChanged(src, old, new) {
		return true
	}
	for _, k := range t.RelatedKeys(src) {
		a, b := old.GetLabels(), new.GetLabels()
		switch k.Kind {
		case rulefile.AnnotationKind:
			a, b = old.GetAnnotations(), new.GetAnnotations()
		case rulefile.DataKind:
			a, b = source.DataOf(old), source.DataOf(new)
		}
		if changed(a, b, []string{k.Key}) {
			return true
		}
	}
	return false
}

// Sources returns the sources the controller must watch for any target
// of s, in the order of sources.
func (s *Set) Sources() []*source.Source {
	var out []*source.Source
	for _, t := range s.Targets {
		for _, src := range t.Sources() {
			if !slices.Contains(out, src) {
				out = append(out, src)
			}
		}
	}
	slices.SortFunc(out, source.Order)
	return out
}
