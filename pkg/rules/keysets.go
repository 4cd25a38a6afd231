package rules

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// copied returns the keys that the key sets of m (of kind) copy onto obj,
// whose namespace is h, with their values and where each was read; a key
// the rule sets otherwise or removes is not copied, and of two key sets
// the first that copies a key gives its value. problems says why a key
// set copied nothing: its object is missing, or a value is not valid.
func (c *Compiled) copied(m *rulefile.Metadata, obj metav1.Object, h home, valid func(string) []string) (out, inputs map[string]string, problems []string) {
	own := m.Computed()
	maps.Copy(own, rulefile.KeysOf(m.Values))
	for _, k := range m.Remove {
		own[k] = ""
	}
	for i := range m.Copy {
		set := &m.Copy[i]
		rel, what, why := c.copySource(set, obj, h)
		if why != "" {
			problems = append(problems, fmt.Sprintf("copy %s %s: %s", set.Source.Field, set, why))
			continue
		}
		from := rel.GetLabels()
		if set.Kind == rulefile.AnnotationKind {
			from = rel.GetAnnotations()
		}
		copied := set.Copied(from)
		for _, k := range slices.Sorted(maps.Keys(copied)) {
			if _, taken := own[k]; taken {
				continue
			}
			if _, taken := out[k]; taken {
				continue
			}
			v := copied[k]
			if msgs := valid(v); len(msgs) > 0 {
				problems = append(problems, fmt.Sprintf("copy %s: the value of %s %q of %s (%d bytes) is not valid: %v", set.Source.Field, set.Kind, k, what, len(v), msgs))
				continue
			}
			out, inputs = put(out, k, v), put(inputs, k, fmt.Sprintf("%s %q of %s", set.Kind, k, what))
		}
	}
	return out, inputs, problems
}

// copySource finds the object set copies from for obj, whose namespace is
// h, and how messages name it; or why there is none.
func (c *Compiled) copySource(set *rulefile.KeySet, obj metav1.Object, h home) (rel metav1.Object, what, why string) {
	if set.Source != source.Namespace {
		return set.Source.Object(obj, h.look, c.owners[set.Owners])
	}
	if h.obj == nil {
		return nil, "", h.why
	}
	return h.obj, fmt.Sprintf("namespace %q", h.obj.GetName()), ""
}

// copiesFrom reports whether c copies key sets from the objects of src:
// its source, or, for an owner, one of the owner resources it walks
// through.
func (c *Compiled) copiesFrom(src *source.Source) bool {
	for _, kind := range kinds {
		for _, set := range c.Of(kind).Copy {
			if c.reads(rulefile.RelatedKey{Source: set.Source, Owners: set.Owners}, src) {
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
				if !c.reads(rulefile.RelatedKey{Source: set.Source, Owners: set.Owners}, src) {
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
