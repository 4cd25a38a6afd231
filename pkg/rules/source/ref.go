package source

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Ref is an object that the object refers to by one of its fields, which
// {fromRef: {resource: RESOURCE, field: PATH, label: KEY}} reads: a
// PersistentVolume's spec.claimRef names its PersistentVolumeClaim by
// namespace, name and UID. It is the entry of the table; the objects a
// rule reads are those of the source RefTo returns for the resource,
// the field and, for a resource whose objects are cached only by name,
// the name.
var Ref = &Source{
	Field:       "fromRef",
	What:        "the object referred to",
	Unset:       "the object refers to none",
	Reason:      "rules read values from objects that objects refer to",
	NoAdmission: "admission policies read the object and its namespace only, not the objects it refers to",
	IsRef:       true,
}

// RefResource is a resource whose objects {fromRef: …} may read.
type RefResource struct {
	// GroupResource is the resource.
	schema.GroupResource
	// Names are the names a rules file may give it, as kubectl names
	// it.
	Names []string
	// Data is set when the data keys of its objects may be read too.
	Data bool
	// Bounded is set when only the objects of the names a rule gives are
	// cached, each through an informer of that name: objects of which a
	// cluster may hold many, most of them unrelated to the rules.
	Bounded bool
}

// RefResources are the resources whose objects {fromRef: …} reads.
var RefResources = []RefResource{
	{GroupResource: schema.GroupResource{Resource: "persistentvolumeclaims"},
		Names: []string{"persistentvolumeclaims", "persistentvolumeclaim", "pvc", "persistentvolumeclaims.v1"}},
	{GroupResource: schema.GroupResource{Resource: "configmaps"},
		Names: []string{"configmaps", "configmap", "cm", "configmaps.v1"}, Data: true, Bounded: true},
}

// RefusedRef says why {fromRef: …} never reads the resource a rules
// file names name, or "" when it is not refused so.
func RefusedRef(name string) string {
	switch strings.TrimSuffix(strings.ToLower(name), ".v1") {
	case "secrets", "secret":
		return "Secrets are never read: their values would be copied into labels or annotations that anyone who may read " +
			"the object sees, and the controller would need to read Secrets"
	}
	return ""
}

// RefResourceNamed returns the RefResource a rules file names name
// (persistentvolumeclaims, pvc, configmaps.v1…), and whether there is one.
func RefResourceNamed(name string) (RefResource, bool) {
	for _, r := range RefResources {
		if slices.Contains(r.Names, name) {
			return r, true
		}
	}
	return RefResource{}, false
}

// refKey identifies a source of RefTo.
type refKey struct {
	gvr   schema.GroupVersionResource
	field string
	name  string
}

// refs interns the sources of RefTo, so that every rule set compiled from
// every reload names one source, and one informer, per resource, field
// and name.
var refs sync.Map // refKey → *Source

// RefTo returns the source of the objects of res that objects name in the
// field at path, or, with a nil path, the object named name in each
// object's namespace; a name limits the source to the objects of that
// name, which alone its informer lists. It is the same one for the same
// arguments.
func RefTo(res Resource, path []string, name string) *Source {
	k := refKey{res.GVR, strings.Join(path, "."), name}
	if s, ok := refs.Load(k); ok {
		return s.(*Source)
	}
	s := *Ref
	s.Resource, s.Ref, s.Named = res, slices.Clone(path), name
	s.What = "the " + res.Kind + " referred to"
	s.Reason = fmt.Sprintf("rules read values from objects of kind %s that objects refer to", res.Kind)
	if name != "" {
		s.Reason += fmt.Sprintf(" (only %q)", name)
	}
	got, _ := refs.LoadOrStore(k, &s)
	return got.(*Source)
}

// Reference is a related object as an object names it.
type Reference struct {
	// Namespace is "" for a cluster-scoped related object.
	Namespace, Name string
	// UID, when the reference gives one, is the UID of the object meant:
	// another object of the same name is not it.
	UID string
}

// String is "shop/data", or "data" without a namespace.
func (r Reference) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// ReferenceOf returns the object of s, a source of RefTo, that obj names,
// or why it names none that may be read. The field at s.Ref holds a name,
// or an object reference (kind, namespace, name, uid). A namespaced
// object refers only within its own namespace; a cluster-scoped one names
// a namespaced object only through a reference that gives its namespace.
// The name s is limited to is not checked: see NamedIn.
func (s *Source) ReferenceOf(obj metav1.Object) (Reference, string) {
	var r Reference
	if s.Ref == nil {
		r.Name = s.Named
	} else {
		field := strings.Join(s.Ref, ".")
		var v any
		if u, ok := obj.(Content); ok {
			v, _, _ = unstructured.NestedFieldNoCopy(u.UnstructuredContent(), s.Ref...)
		}
		var kind string
		switch v := v.(type) {
		case string:
			r.Name = v
		case map[string]any:
			kind, _ = v["kind"].(string)
			r.Namespace, _ = v["namespace"].(string)
			r.Name, _ = v["name"].(string)
			r.UID, _ = v["uid"].(string)
		case map[string]string:
			kind, r.Namespace, r.Name, r.UID = v["kind"], v["namespace"], v["name"], v["uid"]
		}
		if r.Name == "" {
			return Reference{}, "the object names no " + s.Resource.Kind + " in " + field
		}
		if kind != "" && kind != s.Resource.Kind {
			return Reference{}, fmt.Sprintf("%s names a %s, not a %s", field, kind, s.Resource.Kind)
		}
	}
	switch ns := obj.GetNamespace(); {
	case !s.Resource.Namespaced:
		r.Namespace = ""
	case ns != "" && r.Namespace != "" && r.Namespace != ns:
		return Reference{}, fmt.Sprintf("%s %q is in namespace %q: an object refers only to objects of its own namespace (%q)",
			s.Resource.Kind, r.Name, r.Namespace, ns)
	case ns != "":
		r.Namespace = ns
	case r.Namespace == "":
		return Reference{}, fmt.Sprintf("the object is cluster-scoped and names %s %q without a namespace", s.Resource.Kind, r.Name)
	}
	return r, ""
}

// NamedIn returns the namespace and the name of the related object of s
// that obj names, "" and "" when it names none: for a source of RefTo
// limited to a name, none unless it names that one.
func (s *Source) NamedIn(obj metav1.Object) (namespace, name string) {
	if !s.IsRef {
		return s.NamespaceFor(obj), s.RefOf(obj)
	}
	r, why := s.ReferenceOf(obj)
	if why != "" || s.Named != "" && r.Name != s.Named {
		return "", ""
	}
	return r.Namespace, r.Name
}

// referred is Related for a source of RefTo: the object obj refers to,
// matched by UID when the reference gives one.
func (s *Source) referred(obj metav1.Object, look Lookup) (rel metav1.Object, what, why string) {
	r, why := s.ReferenceOf(obj)
	if why != "" {
		return nil, "", why
	}
	what = fmt.Sprintf("%s %q", s.Resource.Kind, r)
	if look == nil {
		return nil, "", what + " cannot be read here"
	}
	rel, ok := look.Find(s, r.Namespace, r.Name)
	if !ok {
		return nil, "", what + " is not known"
	}
	if r.UID != "" && string(rel.GetUID()) != r.UID {
		return nil, "", fmt.Sprintf("%s is not the object referred to: its UID is %s, the reference names %s", what, rel.GetUID(), r.UID)
	}
	return rel, what, ""
}

// DataOf returns the data of obj, a cached ConfigMap that keeps it (a
// Content); nil for any other.
func DataOf(obj metav1.Object) map[string]string {
	u, ok := obj.(Content)
	if !ok {
		return nil
	}
	switch d := u.UnstructuredContent()["data"].(type) {
	case map[string]string:
		return d
	case map[string]any:
		out := make(map[string]string, len(d))
		for k, v := range d {
			if s, ok := v.(string); ok {
				out[k] = s
			}
		}
		return out
	}
	return nil
}

// Refer is a {fromRef: …} key resolved: the source of each name it may
// read (RefTo), one for any name when the resource is not Bounded.
type Refer struct {
	Sources []*Source
}

// NewRefer resolves a {fromRef: …} key of res: the field at path names
// the object (nil: the object named name), one of names when names are
// given.
func NewRefer(res Resource, path []string, name string, names []string) *Refer {
	if path == nil {
		return &Refer{Sources: []*Source{RefTo(res, nil, name)}}
	}
	if len(names) == 0 {
		return &Refer{Sources: []*Source{RefTo(res, path, "")}}
	}
	r := &Refer{}
	for _, n := range names {
		r.Sources = append(r.Sources, RefTo(res, path, n))
	}
	return r
}

// Value reads the label, annotation or data (kind) key of the object
// that obj refers to, as Source.Value does.
func (r *Refer) Value(obj metav1.Object, look Lookup, kind, key string) (value, input, why string) {
	src, why := r.source(obj)
	if why != "" {
		return "", "", why
	}
	return src.Value(obj, look, nil, kind, key)
}

// Object returns the object that obj refers to, as Source.Object does.
func (r *Refer) Object(obj metav1.Object, look Lookup) (rel metav1.Object, what, why string) {
	src, why := r.source(obj)
	if why != "" {
		return nil, "", why
	}
	return src.Object(obj, look, nil)
}

// source returns the source of the object that obj refers to: the one
// source, or that of the name obj's reference gives among r's names.
func (r *Refer) source(obj metav1.Object) (*Source, string) {
	src := r.Sources[0]
	if src.Ref == nil || src.Named == "" {
		return src, ""
	}
	ref, why := src.ReferenceOf(obj)
	if why != "" {
		return nil, why
	}
	i := slices.IndexFunc(r.Sources, func(s *Source) bool { return s.Named == ref.Name })
	if i < 0 {
		return nil, fmt.Sprintf("%s names %s %q, which is not among the names the rule gives (names)", strings.Join(src.Ref, "."), src.Resource.Kind, ref.Name)
	}
	return r.Sources[i], ""
}
