package rules

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// resolveOwners resolves the owner resources of each fromOwner key of c,
// and of its ownerObject, through resolve, and gives each expression that
// reads ownerObject its walk. A name that does not resolve is returned as
// a FieldError, as a rule's resource is, and left out of the walk: an
// owner of that resource ends it.
func (c *Compiled) resolveOwners(resolve ResolveFunc) []rulefile.FieldError {
	var unresolved []rulefile.FieldError
	for _, r := range c.ownerReads() {
		o := r.owners
		if c.owners[o] != nil {
			continue
		}
		w, errs := source.NewWalk(o.Hop, o.Through, resolve, r.keep...)
		for _, err := range errs {
			unresolved = append(unresolved, rulefile.FieldError{Field: fmt.Sprintf("rules[%d].%s", c.Index, r.field), Message: err.Error()})
		}
		c.owners = spec.Put(c.owners, o, w)
	}
	for _, e := range c.celExprs() {
		if len(e.OwnerReads) > 0 {
			e.Owner = c.owners[c.Rule.OwnerObject]
		}
	}
	return unresolved
}

// ownerRead is one owner walk of a rule, the field that asks for it, and
// the fields its owners' caches keep for CEL.
type ownerRead struct {
	owners *rulefile.Owners
	field  string
	keep   [][]string
}

// ownerReads returns the owner walks of c's fromOwner keys and key sets,
// in file order.
func (c *Compiled) ownerReads() []ownerRead {
	var out []ownerRead
	if o := c.Rule.OwnerObject; o != nil {
		var keep [][]string
		for _, e := range c.celExprs() {
			keep = append(keep, e.OwnerReads...)
		}
		out = append(out, ownerRead{o, "ownerObject", keep})
	}
	for _, kind := range kinds {
		m := c.Of(kind)
		for _, l := range m.Levels() {
			for _, key := range slices.Sorted(maps.Keys(l.FromRelated)) {
				if o := l.FromRelated[key].Owners; o != nil {
					out = append(out, ownerRead{o, rulefile.FieldPath(kind+"s", key) + "." + source.Owner.Field, nil})
				}
			}
		}
		for _, set := range m.Copy {
			if set.Owners != nil {
				out = append(out, ownerRead{set.Owners, "copy." + source.Owner.Field, nil})
			}
		}
	}
	return out
}

// RelatedSources returns the sources that c reads values from: those of
// its keys, with each owner resource its fromOwner keys walk through in
// place of source.Owner, in source.Order.
func (c *Compiled) RelatedSources() []*source.Source {
	out := slices.DeleteFunc(c.Rule.RelatedSources(), func(s *source.Source) bool { return s == source.Owner || s == source.Ref })
	for _, w := range c.owners {
		out = source.Union(out, w.Through)
	}
	return source.Union(out, c.refSources())
}

// reads reports whether c's key k reads the objects of src: its source,
// or, for a fromOwner key, one of the owner resources it walks through.
func (c *Compiled) reads(k rulefile.RelatedKey, src *source.Source) bool {
	if k.Refs != nil {
		return c.readsRef(k, src)
	}
	if k.Owners == nil {
		return k.Source == src
	}
	w := c.owners[k.Owners]
	return w != nil && slices.Contains(w.Through, src)
}

// guardSelector keeps e from changing a label of obj that obj's
// controller owner selects it by (source.Selecting), which would orphan
// it: each such change is dropped, and said in e's Problems. Only the
// owners the rules of t read are known: their caches keep selectors.
func (t *Target) guardSelector(e *Evaluation, obj metav1.Object, look source.Lookup) {
	ref, keys := source.Selecting(obj, t.Sources(), look)
	for _, k := range keys {
		v, has := obj.GetLabels()[k]
		want, set := e.Desired.Labels[k]
		if set && (!has || want != v) || has && slices.Contains(e.Desired.RemoveLabels, k) {
			delete(e.Desired.Labels, k)
			e.Desired.RemoveLabels = slices.DeleteFunc(e.Desired.RemoveLabels, func(r string) bool { return r == k })
			e.Problems = append(e.Problems, fmt.Sprintf("label %q is not changed: %s %q selects the object by it (spec.selector), and would orphan it", k, ref.Kind, ref.Name))
		}
	}
}
