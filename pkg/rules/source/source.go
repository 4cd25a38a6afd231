package source

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Source is a kind of object, other than the object itself, that rules
// read: the object names it in one of its fields (any namespaced object
// names its Namespace in metadata.namespace, a Pod names its Node in
// spec.nodeName), and rules read its labels or annotations and follow
// them when they change. The shipped sources are the entries of this
// package (All); a Source made elsewhere (a test's) works the same way
// wherever it is named by a rule's key.
type Source struct {
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
	// NoAdmission says why an admission policy cannot set a value read
	// from the source, which only the controller sets.
	NoAdmission string
	// IsOwner is set for owners (Owner and each OwnerOf): an object names
	// its related object by its controller ownerReferences entry, of the
	// source's kind, rather than by the field at Ref.
	IsOwner bool
	// Keep are the paths of the fields of an owner source's objects that
	// its cache keeps besides their metadata and selector: those that
	// CEL expressions read of ownerObject. An empty path keeps the whole
	// object.
	Keep [][]string
	// IsRef is set for Ref and each RefTo: Ref names the field that
	// refers to the related object, nil when every object reads the one
	// named Named in its namespace; Named, when set, is the only name of
	// the related objects cached (ReferenceOf).
	IsRef bool
	Named string
}

// All returns every source rules may read: the namespace and the Related
// ones.
func All() []*Source { return slices.Clone(all) }

// Related returns the sources that rules read only through their value
// form: all but the namespace.
func Related() []*Source { return slices.Clone(related) }

// ByField returns the shipped source read by the value form field, or nil.
func ByField(field string) *Source {
	for _, s := range all {
		if s.Field == field {
			return s
		}
	}
	return nil
}

// Order compares two sources in the order the docs list them: the
// shipped ones first, in table order, then any other by Field, resource
// and the fields it keeps.
func Order(a, b *Source) int {
	ia, ib := slices.Index(all, a), slices.Index(all, b)
	switch {
	case ia >= 0 && ib >= 0:
		return ia - ib
	case ia >= 0:
		return -1
	case ib >= 0:
		return 1
	case a.Field < b.Field:
		return -1
	case a.Field > b.Field:
		return 1
	}
	if c := strings.Compare(GVRString(a.Resource.GVR), GVRString(b.Resource.GVR)); c != 0 {
		return c
	}
	return slices.CompareFunc(a.Keep, b.Keep, slices.Compare) // an owner's sources: the one that keeps less first
}

// Union appends to out each source of more that it lacks, and sorts it
// in Order.
func Union(out, more []*Source) []*Source {
	for _, src := range more {
		if !slices.Contains(out, src) {
			out = append(out, src)
		}
	}
	slices.SortFunc(out, Order)
	return out
}

// NamedBy reports whether objects of gr may name a related object of s.
func (s *Source) NamedBy(gr schema.GroupResource, namespaced bool) bool {
	if s.IsRef {
		return true // the rule that reads it names the resource
	}
	if s.For.Empty() {
		return namespaced
	}
	return s.For == gr
}

// Content is an object whose fields can be read: an
// *unstructured.Unstructured, or what a cache keeps of one.
type Content interface {
	// UnstructuredContent returns the object's fields, as JSON decodes
	// them, but that maps of strings may be map[string]string.
	UnstructuredContent() map[string]any
}

// RefOf returns the name of the related object that obj names, or "" when
// it names none. obj must hold the field at s.Ref (a Content), unless the
// field is metadata.namespace, which every object keeps.
func (s *Source) RefOf(obj metav1.Object) string {
	if s.IsOwner {
		if ref, ok := ControllerOf(obj); ok && s.Owns(ref) {
			return ref.Name
		}
		return ""
	}
	if s.IsRef {
		_, name := s.NamedIn(obj)
		return name
	}
	if slices.Equal(s.Ref, []string{"metadata", "namespace"}) {
		return obj.GetNamespace()
	}
	u, ok := obj.(Content)
	if !ok {
		return ""
	}
	name, _, _ := unstructured.NestedString(u.UnstructuredContent(), s.Ref...)
	return name
}

// Lookup finds the objects rules read besides the object itself, by
// source: the Namespace of an object (Namespace, namespace ""), a Pod's
// Node (Node). The controller answers from its informers' caches, the
// commands from a list or a read made once. It is passed to each
// evaluation; the objects it returns are only read.
type Lookup interface {
	// Find returns the object of src in namespace ("" for a
	// cluster-scoped source) named name, and whether it is known.
	Find(src *Source, namespace, name string) (metav1.Object, bool)
}

// Namespaces returns a namespace's metadata — its labels, for
// namespaceSelector, and its labels and annotations, for fromNamespace —
// and whether it is known. The object returned is only read. As a Lookup
// it knows of namespaces only; a nil Namespaces knows of none.
type Namespaces func(name string) (metav1.Object, bool)

// Find answers for Namespace, and knows no other source.
func (ns Namespaces) Find(src *Source, _, name string) (metav1.Object, bool) {
	if ns == nil || src != Namespace {
		return nil, false
	}
	return ns(name)
}

// NamespaceOf finds the Namespace name through look, which may be nil.
func NamespaceOf(look Lookup, name string) (metav1.Object, bool) {
	if look == nil {
		return nil, false
	}
	return look.Find(Namespace, "", name)
}
