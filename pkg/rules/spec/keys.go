package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// NamespaceKey is a label or annotation of a namespace that a rule reads a
// value from: {fromNamespace: {label: team}} or {fromNamespace:
// {annotation: example.com/cost-center}}.
type NamespaceKey struct {
	// Kind is "label" or "annotation".
	Kind string
	// Key is the label or annotation key.
	Key string
}

// String formats k as in the rules file: `label "team"`.
func (k NamespaceKey) String() string { return fmt.Sprintf("%s %q", k.Kind, k.Key) }

// RelatedKey is a label or annotation of a related object that a rule
// reads a value from: {fromNode: {label: KEY}}.
type RelatedKey struct {
	// Source is the source read: source.Node for {fromNode: …}. A test
	// may give one of its own, which works as the shipped ones do.
	Source *source.Source
	// Kind is "label" or "annotation"; Key is the key.
	Kind, Key string
	// Owners says which owner is read, for source.Owner ({fromOwner:
	// …}); nil for any other source.
	Owners *Owners
	// Refs says which object is read, for source.Ref ({fromRef: …});
	// nil for any other source. Kind may then be DataKind too.
	Refs *Refs
}

// String formats k as in messages: `label "zone"`.
func (k RelatedKey) String() string { return fmt.Sprintf("%s %q", k.Kind, k.Key) }

// Joined returns the keys of a and b, which share none; a when b is empty.
func Joined(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := maps.Clone(b)
	maps.Copy(out, a)
	return out
}

// IgnoreAnnotation opts an object, or every object of a namespace, out of
// the rules when its value is "true": nothing is set, changed or deleted
// on such objects, whatever the rules say.
const IgnoreAnnotation = "kube-annotator.io/ignore"

// RelatedSources returns the sources besides the namespace that r reads
// values from (each source of its RelatedKeys and key sets), in
// source.Order.
func (r *Rule) RelatedSources() []*source.Source {
	var out []*source.Source
	add := func(src *source.Source) {
		if src != source.Namespace && !slices.Contains(out, src) {
			out = append(out, src)
		}
	}
	if r.OwnerObject != nil {
		add(source.Owner)
	}
	for _, m := range r.Levels() {
		for _, k := range m.FromRelated {
			add(k.Source)
		}
		for _, set := range m.Copy {
			if set.Source != nil {
				add(set.Source)
			}
		}
	}
	slices.SortFunc(out, source.Order)
	return out
}

// owners returns how each of r's fromOwner keys and key sets walks the
// owners.
func (r *Rule) owners() []*Owners {
	var out []*Owners
	if r.OwnerObject != nil {
		out = append(out, r.OwnerObject)
	}
	for _, m := range r.Levels() {
		for _, k := range m.FromRelated {
			if k.Owners != nil {
				out = append(out, k.Owners)
			}
		}
		for _, set := range m.Copy {
			if set.Owners != nil {
				out = append(out, set.Owners)
			}
		}
	}
	return out
}

// KeyProblems returns what makes key no valid key of kind: no qualified
// name (an annotation key is checked lowercased, as the API server does),
// or an annotation key that kube-annotator's admission policies reserve.
func KeyProblems(kind, key string) []string {
	var out []string
	check := key
	if kind == AnnotationKind {
		check = strings.ToLower(key)
	}
	for _, msg := range validation.IsQualifiedName(check) {
		out = append(out, fmt.Sprintf("invalid %s key: %s", kind, msg))
	}
	if kind == AnnotationKind && patch.IsMarker(check) {
		out = append(out, fmt.Sprintf("reserved annotation key: kube-annotator's admission policies record in *.%s/* annotations the keys they set", patch.MarkerDomain))
	}
	return out
}
