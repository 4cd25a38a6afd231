package rules

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RelatedSource is a kind of object, other than the object itself and its
// namespace, that rules read values from: the object names it in one of
// its fields (a Pod names its Node in spec.nodeName), and a value form,
// {fromNode: {label: KEY}}, reads a label or annotation of it and follows
// it when it changes. Each source is one entry of relatedSources; the
// decoder, the JSON Schema, the cache's projection and the controller's
// watch of the related objects all follow from it. Only the Node of a Pod
// is defined; a Pod's owner or a ConfigMap would be entries like it.
type RelatedSource struct {
	// Field is the value form that reads the source: "fromNode".
	Field string
	// Resource is the related objects' resource.
	Resource Resource
	// For is the only resource whose objects name a related object of
	// this source; Names are the names a rules file may give it.
	For   schema.GroupResource
	Names []string
	// Ref is the path of the field that names the related object (in the
	// object's namespace, when the source is namespaced).
	Ref []string
	// What names the related object in messages: "the Pod's Node".
	What string
	// Unset says why an object whose Ref is empty has no related object.
	Unset string
}

// RelatedSources are the sources rules may read values from.
func RelatedSources() []*RelatedSource { return slices.Clone(relatedSources) }

// relatedSources are the RelatedSources, in the order the docs list them.
var relatedSources = []*RelatedSource{NodeSource}

// relatedSource returns the source read by the value form field, or nil.
func relatedSource(field string) *RelatedSource {
	for _, s := range relatedSources {
		if s.Field == field {
			return s
		}
	}
	return nil
}

// RefOf returns the name of the related object that obj names, or "" when
// it names none. obj must hold the field at s.Ref (an
// *unstructured.Unstructured, or what a cache that kept the field keeps of
// one).
func (s *RelatedSource) RefOf(obj metav1.Object) string {
	u, ok := obj.(objectContent)
	if !ok {
		return ""
	}
	name, _, _ := unstructured.NestedString(u.UnstructuredContent(), s.Ref...)
	return name
}

// ReadBy reports whether rule r reads values from the objects of s; the
// rbac command asks it of each rule, to grant watching them.
func (s *RelatedSource) ReadBy(r *Rule) bool {
	for _, m := range []map[string]RelatedKey{r.AnnotationsFromRelated, r.LabelsFromRelated} {
		for _, k := range m {
			if k.From == s.Field {
				return true
			}
		}
	}
	return false
}

// RelatedKey is a label or annotation of a related object that a rule
// reads a value from: {fromNode: {label: KEY}}.
type RelatedKey struct {
	// From is the value form, the Field of a RelatedSource: "fromNode".
	From string
	// Kind is "label" or "annotation"; Key is the key.
	Kind, Key string
}

// String formats k as in messages: `label "zone"`.
func (k RelatedKey) String() string { return fmt.Sprintf("%s %q", k.Kind, k.Key) }

// Source returns the source k reads.
func (k RelatedKey) Source() *RelatedSource { return relatedSource(k.From) }

// Related finds a related object by namespace ("" for a cluster-scoped
// source) and name, and says whether it is known. The object is only
// read.
type Related func(namespace, name string) (metav1.Object, bool)

// Relate makes the rules of s read the related objects of src through
// find. Call it before s is used: the controller does when it takes a
// set, the commands before they decide. Without it, the values of src are
// missing, for want of a way to read the related objects.
func (s *Set) Relate(src *RelatedSource, find Related) {
	for _, t := range s.Targets {
		t.Relate(src, find)
	}
}

// Relate makes the rules of t read the related objects of src through
// find, as Set.Relate does for every target of a set.
func (t *Target) Relate(src *RelatedSource, find Related) {
	t.related = put(t.related, src.Field, find)
}

// RelatedSources returns the sources the rules of t read values from.
func (t *Target) RelatedSources() []*RelatedSource {
	var out []*RelatedSource
	for _, src := range relatedSources {
		if len(t.RelatedKeys(src)) > 0 {
			out = append(out, src)
		}
	}
	return out
}

// RelatedSources returns the sources that any rule of s reads values from.
func (s *Set) RelatedSources() []*RelatedSource {
	var out []*RelatedSource
	for _, t := range s.Targets {
		for _, src := range t.RelatedSources() {
			if !slices.Contains(out, src) {
				out = append(out, src)
			}
		}
	}
	return out
}

// RelatedKeys returns, sorted, the keys of src's objects that the rules of
// t read, as RelatedKeys.
func (t *Target) RelatedKeys(src *RelatedSource) []RelatedKey {
	var out []RelatedKey
	for _, r := range t.Rules {
		for _, m := range []map[string]RelatedKey{r.AnnotationsFromRelated, r.LabelsFromRelated} {
			for _, k := range m {
				if k.From == src.Field && !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b RelatedKey) int { return strings.Compare(a.Kind+"/"+a.Key, b.Kind+"/"+b.Key) })
	return out
}

// RelatedChangeMatters reports whether a change of an object of src from
// old to new can change what the rules of t want: a change of a label or
// annotation they read.
func (t *Target) RelatedChangeMatters(src *RelatedSource, old, new metav1.Object) bool {
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

// relatedRefs returns the fields of an object that the rule reads to find
// its related objects.
func (c *Compiled) relatedRefs() [][]string {
	var out [][]string
	for _, m := range []map[string]RelatedKey{c.AnnotationsFromRelated, c.LabelsFromRelated} {
		for _, k := range m {
			if ref := k.Source().Ref; !slices.ContainsFunc(out, func(p []string) bool { return slices.Equal(p, ref) }) {
				out = append(out, ref)
			}
		}
	}
	return out
}

// readsRelated reports whether the rule reads values from related objects.
func (c *Compiled) readsRelated() bool {
	return len(c.AnnotationsFromRelated)+len(c.LabelsFromRelated) > 0
}

// relatedValues reads the values of from for obj from its related objects,
// which find gives by source. A key whose related object is not named, not
// known or lacks the key, or whose value is not valid, sets nothing; it is
// returned in missing. inputs says, by key, where each value was read.
func relatedValues(from map[string]RelatedKey, obj metav1.Object, find map[string]Related, valid func(string) []string) (out, inputs map[string]string, miss []missing) {
	if len(from) == 0 {
		return nil, nil, nil
	}
	for _, k := range slices.Sorted(maps.Keys(from)) {
		rk := from[k]
		v, input, why := relatedValue(rk, obj, find[rk.From])
		if why == "" {
			if msgs := valid(v); len(msgs) > 0 {
				why = fmt.Sprintf("the value of %s (%d bytes) is not valid: %v", input, len(v), msgs)
			}
		}
		if why != "" {
			miss = append(miss, missing{k, rk.From + ": " + why})
			continue
		}
		out, inputs = put(out, k, v), put(inputs, k, input)
	}
	return out, inputs, miss
}

// relatedValue reads k of the related object of obj through find: the
// value, and where it was read; or why it was not.
func relatedValue(k RelatedKey, obj metav1.Object, find Related) (value, input, why string) {
	src := k.Source()
	name := src.RefOf(obj)
	if name == "" {
		return "", "", src.Unset
	}
	ns := ""
	if src.Resource.Namespaced {
		ns = obj.GetNamespace()
	}
	what := fmt.Sprintf("%s %q", src.Resource.Kind, name)
	if find == nil {
		return "", "", what + " cannot be read here"
	}
	rel, ok := find(ns, name)
	if !ok {
		return "", "", what + " is not known"
	}
	m := rel.GetLabels()
	if k.Kind == annotationKind {
		m = rel.GetAnnotations()
	}
	v, ok := m[k.Key]
	if !ok {
		return "", "", fmt.Sprintf("%s has no %s", what, k)
	}
	return v, fmt.Sprintf("%s of %s", k, what), ""
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
			e.inputs = put(e.inputs, keyOf{kind, k}, in)
		}
	}
}

// relatedKey decodes {label: KEY} or {annotation: KEY}, the value of the
// value form of src, found at path p.
func (d *decoder) relatedKey(n *yaml.Node, p string, src *RelatedSource) (RelatedKey, bool) {
	d.lineOf(p, n)
	kind, key, ok := d.objectKey(n, p, src.What)
	return RelatedKey{From: src.Field, Kind: kind, Key: key}, ok
}

// relatedFor reports, for rule r at path, each value read from a related
// object by a rule that names a resource other than the one whose objects
// name it: only a Pod has a Node.
func (d *decoder) relatedFor(n *yaml.Node, path string, r *Rule) {
	for _, kind := range []struct {
		field string
		from  map[string]RelatedKey
	}{{"annotations", r.AnnotationsFromRelated}, {"labels", r.LabelsFromRelated}} {
		for _, key := range slices.Sorted(maps.Keys(kind.from)) {
			src := kind.from[key].Source()
			for j, name := range r.Resources {
				if slices.Contains(src.Names, strings.ToLower(name)) {
					continue
				}
				p := fieldPath(fieldPath(path+"."+kind.field, key), src.Field)
				d.errs = append(d.errs, FieldError{Line: cmp.Or(d.lines[p], n.Line), Field: p, Message: fmt.Sprintf(
					"reads %s, but the rule also names %q (resources[%d]): only %s have one; give this key in a rule of its own for %s",
					src.What, name, j, src.For.String(), src.For.String())})
			}
		}
	}
}
