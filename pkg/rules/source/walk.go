package source

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxOwnerHops bounds a walk up an object's controller owners: no chain
// of Kubernetes' own controllers is longer than two, and a longer one is
// more likely a loop of ownerReferences than a chain.
const maxOwnerHops = 8

// Walk is a walk up an object's controller owners, as a {fromOwner: …}
// key says it, resolved: the source of each owner resource it walks
// through, and the one whose object it reads.
type Walk struct {
	// Through are the sources of the owner resources walked through (each
	// OwnerOf one): an owner of any other resource ends the walk.
	Through []*Source
	// Hop is the source read: the first owner of it in the chain; nil
	// reads the root, the last owner the walk reaches. HopName is its
	// name as written, "" for the root; Hop is nil too when it did not
	// resolve.
	Hop     *Source
	HopName string
}

// NewWalk resolves the owner resources of a walk through resolve: those
// it walks through, as written, and hop among them ("" for the root). A
// name that does not resolve is returned as an error, and left out: an
// owner of that resource ends the walk. The caches of the owners keep the
// fields at keep too (OwnerOf).
func NewWalk(hop string, through []string, resolve func(string) (Resource, error), keep ...[]string) (*Walk, []error) {
	w := &Walk{HopName: hop}
	var errs []error
	for _, name := range through {
		res, err := resolve(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("owner resource %q: %w", name, err))
			continue
		}
		src := OwnerOf(res, keep...)
		w.Through = append(w.Through, src)
		if name == hop {
			w.Hop = src
		}
	}
	return w, errs
}

// Owner finds the owner that w reads of obj through look: the object,
// and the owners walked to reach it, it last (`ReplicaSet "web-6d5f8"`,
// `Deployment "web"`); or why there is none. An owner whose UID is not
// the one obj's reference names is another object of the same name: not
// the owner.
func (w *Walk) Owner(obj metav1.Object, look Lookup) (found metav1.Object, hops []string, why string) {
	if w.HopName != "" && w.Hop == nil {
		return nil, nil, fmt.Sprintf("the owner resource %q is not served", w.HopName)
	}
	cur := obj
	for range maxOwnerHops {
		ref, ok := ControllerOf(cur)
		if !ok {
			break
		}
		i := slices.IndexFunc(w.Through, func(s *Source) bool { return s.Owns(ref) })
		if i < 0 {
			break
		}
		src := w.Through[i]
		what := fmt.Sprintf("%s %q", ref.Kind, ref.Name)
		if look == nil {
			return nil, nil, what + " cannot be read here"
		}
		o, ok := look.Find(src, src.NamespaceFor(obj), ref.Name)
		if !ok || o.GetUID() != ref.UID {
			return nil, nil, what + " is not known"
		}
		hops = append(hops, what)
		found, cur = o, o
		if src == w.Hop {
			return found, hops, ""
		}
	}
	switch {
	case w.Hop != nil:
		return nil, nil, fmt.Sprintf("no owner of kind %s manages the object", w.Hop.Resource.Kind)
	case found == nil:
		return nil, nil, "the object has no controller owner of kind " + strings.Join(w.kinds(), ", ")
	}
	return found, hops, ""
}

// kinds returns the kinds w walks through.
func (w *Walk) kinds() []string {
	out := make([]string, len(w.Through))
	for i, s := range w.Through {
		out[i] = s.Resource.Kind
	}
	return out
}

// NamespaceFor is the namespace in which the related object of s that
// obj names is found: obj's, for a namespaced source; "" else.
func (s *Source) NamespaceFor(obj metav1.Object) string {
	if s.Resource.Namespaced {
		return obj.GetNamespace()
	}
	return ""
}

// Related finds the related object of s that obj names, through look:
// the object and how messages name it (`Node "n1"`); or why there is
// none. s is no owner: see Walk.
func (s *Source) Related(obj metav1.Object, look Lookup) (rel metav1.Object, what, why string) {
	if s.IsRef {
		return s.referred(obj, look)
	}
	name := s.RefOf(obj)
	if name == "" {
		return nil, "", s.Unset
	}
	what = fmt.Sprintf("%s %q", s.Resource.Kind, name)
	if look == nil {
		return nil, "", what + " cannot be read here"
	}
	rel, ok := look.Find(s, s.NamespaceFor(obj), name)
	if !ok {
		return nil, "", what + " is not known"
	}
	return rel, what, ""
}

// Object finds the related object of s that obj names — for an owner,
// the one w finds — through look: the object, and how messages name it
// (`Deployment "web", through ReplicaSet "web-6d5f8"`); or why there is
// none.
func (s *Source) Object(obj metav1.Object, look Lookup, w *Walk) (rel metav1.Object, what, why string) {
	switch {
	case !s.IsOwner:
		return s.Related(obj, look)
	case w == nil:
		return nil, "", "no owner resource is served"
	}
	rel, hops, why := w.Owner(obj, look)
	if why != "" {
		return nil, "", why
	}
	what = hops[len(hops)-1]
	if len(hops) > 1 {
		what += ", through " + strings.Join(hops[:len(hops)-1], " → ")
	}
	return rel, what, ""
}

// Value reads the label (kind "label"), annotation (kind "annotation")
// or, of a ConfigMap, data (kind "data") key of the related object of s
// that obj names — for an owner, the one
// w finds — through look: the value, and where it was read (`label
// "team" of Deployment "web", through ReplicaSet "web-6d5f8"`); or why
// it was not.
func (s *Source) Value(obj metav1.Object, look Lookup, w *Walk, kind, key string) (value, input, why string) {
	rel, what, why := s.Object(obj, look, w)
	if why != "" {
		return "", "", why
	}
	m := rel.GetLabels()
	switch kind {
	case "annotation":
		m = rel.GetAnnotations()
	case "data":
		m = DataOf(rel)
	}
	v, ok := m[key]
	if !ok {
		return "", "", fmt.Sprintf("%s has no %s %q", strings.SplitN(what, ", through ", 2)[0], kind, key)
	}
	return v, fmt.Sprintf("%s %q of %s", kind, key, what), ""
}
