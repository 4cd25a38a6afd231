package rules

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RelatedSource is a kind of object, other than the object itself, that
// rules read: the object names it in one of its fields (any namespaced
// object names its Namespace in metadata.namespace, a Pod names its Node
// in spec.nodeName), and rules read its labels or annotations and follow
// them when they change. Each source is one entry of sources; the
// decoder, the JSON Schema, the cache's projection, the lookups of every
// command and the controller's watch of the related objects (one
// informer a source, and an index from a related object to the objects
// that name it) all follow from it.
type RelatedSource struct {
	// Field is the value form that reads the source: "fromNode".
	Field string
	// Resource is the related objects' resource.
	Resource Resource
	// For is the only resource whose objects name a related object of
	// this source, and Names the names a rules file may give it; the zero
	// For is every namespaced resource.
	For   schema.GroupResource
	Names []string
	// Self is the resource whose objects are their own related object of
	// this source (a Namespace reads its own keys with fromNamespace).
	Self schema.GroupResource
	// Ref is the path of the field that names the related object (in the
	// object's namespace, when the source is namespaced).
	Ref []string
	// What names the related object in messages: "the Pod's Node".
	What string
	// Unset says why an object whose Ref is empty has no related object.
	Unset string
	// Reason says, in the controller's log, why it watches the source.
	Reason string
}

// sources are every source, in the order the docs list them: the
// namespace, then the relatedSources, which rules read only through their
// value form.
var sources = append([]*RelatedSource{NamespaceSource}, relatedSources...)

// relatedSources are the sources read only through their value form
// ({fromNode: …}), in the order the docs list them.
var relatedSources = []*RelatedSource{NodeSource}

// Sources returns every source rules may read: the namespace and the
// RelatedSources.
func Sources() []*RelatedSource { return slices.Clone(sources) }

// RelatedSources returns the sources that rules read only through their
// value form: all but the namespace.
func RelatedSources() []*RelatedSource { return slices.Clone(relatedSources) }

// relatedSource returns the source read by the value form field, or nil.
func relatedSource(field string) *RelatedSource {
	for _, s := range sources {
		if s.Field == field {
			return s
		}
	}
	return nil
}

// NamedBy reports whether objects of gr may name a related object of s.
func (s *RelatedSource) NamedBy(gr schema.GroupResource, namespaced bool) bool {
	if s.For.Empty() {
		return namespaced
	}
	return s.For == gr
}

// RefOf returns the name of the related object that obj names, or "" when
// it names none. obj must hold the field at s.Ref (an
// *unstructured.Unstructured, or what a cache that kept the field keeps of
// one), unless the field is metadata.namespace, which every object keeps.
func (s *RelatedSource) RefOf(obj metav1.Object) string {
	if slices.Equal(s.Ref, []string{"metadata", "namespace"}) {
		return obj.GetNamespace()
	}
	u, ok := obj.(objectContent)
	if !ok {
		return ""
	}
	name, _, _ := unstructured.NestedString(u.UnstructuredContent(), s.Ref...)
	return name
}

// Lookup finds the objects rules read besides the object itself, by
// source: the Namespace of an object (NamespaceSource, namespace ""), a
// Pod's Node (NodeSource). The controller answers from its informers'
// caches, the commands from a list or a read made once. It is passed to
// each evaluation; the objects it returns are only read.
type Lookup interface {
	// Find returns the object of src in namespace ("" for a
	// cluster-scoped source) named name, and whether it is known.
	Find(src *RelatedSource, namespace, name string) (metav1.Object, bool)
}

// namespaceIn finds the Namespace name through look, which may be nil.
func namespaceIn(look Lookup, name string) (metav1.Object, bool) {
	if look == nil {
		return nil, false
	}
	return look.Find(NamespaceSource, "", name)
}

// Sources returns the sources the controller must watch for the objects
// of t: the namespace where a namespaced object may opt out or a rule
// selects Namespaces by their labels (NeedsNamespaces), and each source
// a rule reads values from. They are found once, when t is compiled (a
// target made otherwise, such as a prune's, finds them at each call); the
// slice is shared: read only.
func (t *Target) Sources() []*RelatedSource {
	if t.sources != nil {
		return t.sources
	}
	return t.neededSources()
}

// neededSources computes Sources.
func (t *Target) neededSources() []*RelatedSource {
	var out []*RelatedSource
	if t.NeedsNamespaces() {
		out = append(out, NamespaceSource)
	}
	return append(out, t.RelatedSources()...)
}

// SourceChangeMatters reports whether a change of an object of src from
// old to new can change what the rules of t want of the objects that
// name it: for a namespace, opting in or out, or a change of its labels
// when a rule selects by them, or of a key a rule reads; for any other
// source, a change of a key a rule reads.
func (t *Target) SourceChangeMatters(src *RelatedSource, old, new metav1.Object) bool {
	if src == NamespaceSource {
		return OptsOut(old.GetAnnotations()) != OptsOut(new.GetAnnotations()) || t.NamespaceChangeMatters(old, new)
	}
	for _, k := range t.RelatedKeys(src) {
		a, b := old.GetLabels(), new.GetLabels()
		if k.Kind == annotationKind {
			a, b = old.GetAnnotations(), new.GetAnnotations()
		}
		if changed(a, b, []string{k.Key}) {
			return true
		}
	}
	return false
}

// Sources returns the sources the controller must watch for any target
// of s, in the order of sources.
func (s *Set) Sources() []*RelatedSource {
	var out []*RelatedSource
	for _, t := range s.Targets {
		for _, src := range t.Sources() {
			if !slices.Contains(out, src) {
				out = append(out, src)
			}
		}
	}
	slices.SortFunc(out, func(a, b *RelatedSource) int { return slices.Index(sources, a) - slices.Index(sources, b) })
	return out
}
