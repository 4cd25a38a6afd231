package rules

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// resolveRefs resolves the resource of each fromRef key of c through
// resolve. A name that does not resolve is returned as a FieldError, as
// a rule's resource is; the key then reads nothing, and its default
// applies.
func (c *Compiled) resolveRefs(resolve ResolveFunc) []rulefile.FieldError {
	var unresolved []rulefile.FieldError
	add := func(r *rulefile.Refs, field string) {
		if r == nil || c.refs[r] != nil {
			return
		}
		res, err := resolve(r.Resource)
		if err != nil {
			unresolved = append(unresolved, rulefile.FieldError{Field: field + "." + source.Ref.Field + ".resource", Message: err.Error()})
			return
		}
		c.refs = spec.Put(c.refs, r, source.NewRefer(res, r.Field, r.Name, r.Names))
	}
	for _, kind := range c.relatedByKind() {
		for _, key := range slices.Sorted(maps.Keys(kind.from)) {
			add(kind.from[key].Refs, rulefile.FieldPath(fmt.Sprintf("rules[%d].%s", c.Index, kind.field), key))
		}
	}
	for _, kind := range kinds {
		for _, set := range c.Of(kind).Copy {
			add(set.Refs, fmt.Sprintf("rules[%d].copy", c.Index))
		}
	}
	return unresolved
}

// relatedFrom is the fromNode, fromOwner and fromRef keys of one level of
// a kind's default chains, and the field that holds that kind.
type relatedFrom struct {
	field string
	from  map[string]rulefile.RelatedKey
}

// relatedByKind returns c's keys read from related objects, annotations
// then labels, the keys' own value forms then those given as defaults.
func (c *Compiled) relatedByKind() []relatedFrom {
	var out []relatedFrom
	for _, kind := range kinds {
		for _, l := range c.Of(kind).Levels() {
			out = append(out, relatedFrom{kind + "s", l.FromRelated})
		}
	}
	return out
}

// refSources returns the sources c's fromRef keys read.
func (c *Compiled) refSources() []*source.Source {
	var out []*source.Source
	for _, r := range c.refs {
		out = source.Union(out, r.Sources)
	}
	return out
}

// readsRef reports whether k, a fromRef key of c, reads the objects of
// src.
func (c *Compiled) readsRef(k rulefile.RelatedKey, src *source.Source) bool {
	r := c.refs[k.Refs]
	return r != nil && slices.Contains(r.Sources, src)
}

// refScopes reports each fromRef key and copy of the rules of t, a
// cluster-scoped resource, that reads a namespaced object by name: a
// cluster-scoped object has no namespace to find it in, so the key could
// never be set. (One named through an object reference's namespace is
// read.) Lines are f's.
func refScopes(f *rulefile.File, t *Target) []rulefile.FieldError {
	if t.Namespaced {
		return nil
	}
	var out []rulefile.FieldError
	check := func(c *Compiled, refs *rulefile.Refs, p string) {
		if r := c.refs[refs]; r != nil && refs.Field == nil && r.Sources[0].Resource.Namespaced {
			out = append(out, rulefile.FieldError{Line: f.Line(p), Field: p, Message: fmt.Sprintf(
				"%s are cluster-scoped: they have no namespace to find %s %q in; read it through field:, an object reference that gives its namespace",
				t.GVR.Resource, r.Sources[0].Resource.Kind, refs.Name)})
		}
	}
	for _, c := range t.Rules {
		for _, kind := range c.relatedByKind() {
			for _, key := range slices.Sorted(maps.Keys(kind.from)) {
				check(c, kind.from[key].Refs, rulefile.FieldPath(fmt.Sprintf("rules[%d].%s", c.Index, kind.field), key)+"."+source.Ref.Field+".name")
			}
		}
		for _, kind := range kinds {
			for _, set := range c.Of(kind).Copy {
				check(c, set.Refs, fmt.Sprintf("rules[%d].copy[%d].%s.name", c.Index, set.Item, source.Ref.Field))
			}
		}
	}
	return out
}
