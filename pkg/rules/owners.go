package rules

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// resolveOwners resolves the owner resources of each fromOwner key of c
// through resolve. A name that does not resolve is returned as a
// FieldError, as a rule's resource is, and left out of the walk: an
// owner of that resource ends it.
func (c *Compiled) resolveOwners(resolve ResolveFunc) []rulefile.FieldError {
	var unresolved []rulefile.FieldError
	for _, kind := range []struct {
		field string
		from  map[string]rulefile.RelatedKey
	}{{"annotations", c.AnnotationsFromRelated}, {"labels", c.LabelsFromRelated}} {
		for _, key := range slices.Sorted(maps.Keys(kind.from)) {
			o := kind.from[key].Owners
			if o == nil || c.owners[o] != nil {
				continue
			}
			w := &source.Walk{HopName: o.Hop}
			for _, name := range o.Through {
				res, err := resolve(name)
				if err != nil {
					p := rulefile.FieldPath(fmt.Sprintf("rules[%d].%s", c.Index, kind.field), key) + "." + source.Owner.Field
					unresolved = append(unresolved, rulefile.FieldError{Field: p, Message: fmt.Sprintf("owner resource %q: %v", name, err)})
					continue
				}
				src := source.OwnerOf(res)
				w.Through = append(w.Through, src)
				if name == o.Hop {
					w.Hop = src
				}
			}
			c.owners = put(c.owners, o, w)
		}
	}
	return unresolved
}

// ownerSources returns the sources of the owner resources c's fromOwner
// keys walk through.
func (c *Compiled) ownerSources() []*source.Source {
	var out []*source.Source
	for _, w := range c.owners {
		out = source.Union(out, w.Through)
	}
	return out
}

// RelatedSources returns the sources that c reads values from: those of
// its keys, with each owner resource its fromOwner keys walk through in
// place of source.Owner, in source.Order.
func (c *Compiled) RelatedSources() []*source.Source {
	out := slices.DeleteFunc(c.Rule.RelatedSources(), func(s *source.Source) bool { return s == source.Owner })
	return source.Union(out, c.ownerSources())
}

// reads reports whether c's key k reads the objects of src: its source,
// or, for a fromOwner key, one of the owner resources it walks through.
func (c *Compiled) reads(k rulefile.RelatedKey, src *source.Source) bool {
	if k.Owners == nil {
		return k.Source == src
	}
	w := c.owners[k.Owners]
	return w != nil && slices.Contains(w.Through, src)
}
