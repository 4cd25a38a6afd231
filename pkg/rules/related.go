package rules

import (
	"slices"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// RelatedSources returns the sources the rules of t read values from,
// in source.Order.
func (t *Target) RelatedSources() []*source.Source {
	var out []*source.Source
	for _, r := range t.Rules {
		out = source.Union(out, r.RelatedSources())
	}
	return out
}

// RelatedSources returns the sources that any rule of s reads values
// from, in source.Order.
func (s *Set) RelatedSources() []*source.Source {
	var out []*source.Source
	for _, t := range s.Targets {
		out = source.Union(out, t.RelatedSources())
	}
	return out
}

// RelatedKeys returns, sorted, the keys of src's objects that the rules of
// t read, as RelatedKeys.
func (t *Target) RelatedKeys(src *source.Source) []rulefile.RelatedKey {
	var out []rulefile.RelatedKey
	for _, r := range t.Rules {
		for _, m := range r.Levels() {
			for _, k := range m.FromRelated {
				if r.reads(k, src) && !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b rulefile.RelatedKey) int { return strings.Compare(a.Kind+"/"+a.Key, b.Kind+"/"+b.Key) })
	return out
}

// relatedRefs returns the fields of an object that the rule reads to find
// its related objects.
func (c *Compiled) relatedRefs() [][]string {
	var out [][]string
	add := func(src *source.Source, ref []string) {
		if src.IsOwner || ref == nil {
			return // a metadata cache keeps owners (Projection.Owners); a name given is no field
		}
		if !slices.ContainsFunc(out, func(p []string) bool { return slices.Equal(p, ref) }) {
			out = append(out, ref)
		}
	}
	for _, l := range c.Levels() {
		for _, k := range l.FromRelated {
			ref := k.Source.Ref
			if k.Refs != nil {
				ref = k.Refs.Field // nil for a name given
			}
			add(k.Source, ref)
		}
	}
	for _, kind := range kinds {
		m := c.Of(kind)
		for _, set := range m.Copy {
			switch {
			case set.Refs != nil:
				add(set.Source, set.Refs.Field) // nil for a name given
			case set.Source != nil:
				add(set.Source, set.Source.Ref)
			}
		}
	}
	return out
}

// readsRelated reports whether the rule reads values, or copies key sets,
// from related objects besides the namespace.
func (c *Compiled) readsRelated() bool {
	return len(c.Rule.RelatedSources()) > 0
}

// Input returns where the value of the key of kind ("annotation" or
// "label") in e was read, for a value read from a related object; "" for
// any other.
func (e *Evaluation) Input(kind, key string) string { return e.inputs[keyOf{kind, key}] }

// recordInputs records inputs, where rule read the values of keys of
// kind, for the keys whose value is rule's.
func (e *Evaluation) recordInputs(inputs map[string]string, rule, kind string) {
	for k, in := range inputs {
		if e.setBy[keyOf{kind, k}] == rule {
			e.inputs = spec.Put(e.inputs, keyOf{kind, k}, in)
		}
	}
}
