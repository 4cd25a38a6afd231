package rules

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// copiesFrom reports whether c copies key sets from the objects of src:
// its source, or, for an owner, one of the owner resources it walks
// through.
func (c *Compiled) copiesFrom(src *source.Source) bool {
	for _, kind := range kinds {
		for _, set := range c.Of(kind).Copy {
			if c.reads(rulefile.RelatedKey{Source: set.Source, Owners: set.Owners, Refs: set.Refs}, src) {
				return true
			}
		}
	}
	return false
}

// copyChanged reports whether a change of an object of src from old to
// new changes what a key set of the rules of t copies from it.
func (t *Target) copyChanged(src *source.Source, old, new metav1.Object) bool {
	for _, c := range t.Rules {
		for _, kind := range kinds {
			for i := range c.Of(kind).Copy {
				set := &c.Of(kind).Copy[i]
				if !c.reads(rulefile.RelatedKey{Source: set.Source, Owners: set.Owners, Refs: set.Refs}, src) {
					continue
				}
				a, b := old.GetLabels(), new.GetLabels()
				if set.Kind == rulefile.AnnotationKind {
					a, b = old.GetAnnotations(), new.GetAnnotations()
				}
				if !maps.Equal(set.Copied(a), set.Copied(b)) {
					return true
				}
			}
		}
	}
	return false
}
