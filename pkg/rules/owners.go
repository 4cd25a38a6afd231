package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// maxOwnerHops bounds a walk up an object's controller owners: no chain
// of Kubernetes' own controllers is longer than two, and a longer one is
// more likely a loop of ownerReferences than a chain.
const maxOwnerHops = 8

// ownerWalk is a {fromOwner: …} key's walk, resolved: the source of each
// owner resource it walks through, and the one whose object it reads.
type ownerWalk struct {
	through []*source.Source
	// hop is the source read; nil reads the root. hopName is its name as
	// written, "" for the root; hop is nil too when it did not resolve.
	hop     *source.Source
	hopName string
}

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
			w := &ownerWalk{hopName: o.Hop}
			for _, name := range o.Through {
				res, err := resolve(name)
				if err != nil {
					p := rulefile.FieldPath(fmt.Sprintf("rules[%d].%s", c.Index, kind.field), key) + "." + source.Owner.Field
					unresolved = append(unresolved, rulefile.FieldError{Field: p, Message: fmt.Sprintf("owner resource %q: %v", name, err)})
					continue
				}
				src := source.OwnerOf(res)
				w.through = append(w.through, src)
				if name == o.Hop {
					w.hop = src
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
		out = source.Union(out, w.through)
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
	return w != nil && slices.Contains(w.through, src)
}

// owner finds the owner that w reads of obj through look: the object,
// and the owners walked to reach it, it last (`ReplicaSet "web-6d5f8"`,
// `Deployment "web"`); or why there is none.
func (w *ownerWalk) owner(obj metav1.Object, look source.Lookup) (found metav1.Object, hops []string, why string) {
	if w.hopName != "" && w.hop == nil {
		return nil, nil, fmt.Sprintf("the owner resource %q is not served", w.hopName)
	}
	cur := obj
	for range maxOwnerHops {
		ref, ok := source.ControllerOf(cur)
		if !ok {
			break
		}
		i := slices.IndexFunc(w.through, func(s *source.Source) bool { return s.Owns(ref) })
		if i < 0 {
			break
		}
		src := w.through[i]
		what := fmt.Sprintf("%s %q", ref.Kind, ref.Name)
		if look == nil {
			return nil, nil, what + " cannot be read here"
		}
		ns := ""
		if src.Resource.Namespaced {
			ns = obj.GetNamespace()
		}
		o, ok := look.Find(src, ns, ref.Name)
		if !ok || o.GetUID() != ref.UID {
			return nil, nil, what + " is not known"
		}
		hops = append(hops, what)
		found, cur = o, o
		if src == w.hop {
			return found, hops, ""
		}
	}
	switch {
	case w.hop != nil:
		return nil, nil, fmt.Sprintf("no owner of kind %s manages the object", w.hop.Resource.Kind)
	case found == nil:
		return nil, nil, "the object has no controller owner of kind " + strings.Join(w.names(), ", ")
	}
	return found, hops, ""
}

// names returns the kinds w walks through.
func (w *ownerWalk) names() []string {
	out := make([]string, len(w.through))
	for i, s := range w.through {
		out[i] = s.Resource.Kind
	}
	return out
}

// ownerValue reads k, a fromOwner key, of obj's owner through look: the
// value, and where it was read; or why it was not.
func (c *Compiled) ownerValue(k rulefile.RelatedKey, obj metav1.Object, look source.Lookup) (value, input, why string) {
	w := c.owners[k.Owners]
	if w == nil {
		return "", "", "no owner resource is served"
	}
	owner, hops, why := w.owner(obj, look)
	if why != "" {
		return "", "", why
	}
	m := owner.GetLabels()
	if k.Kind == rulefile.AnnotationKind {
		m = owner.GetAnnotations()
	}
	read := hops[len(hops)-1]
	v, ok := m[k.Key]
	if !ok {
		return "", "", fmt.Sprintf("%s has no %s", read, k)
	}
	if len(hops) > 1 {
		read += ", through " + strings.Join(hops[:len(hops)-1], " → ")
	}
	return v, fmt.Sprintf("%s of %s", k, read), ""
}
