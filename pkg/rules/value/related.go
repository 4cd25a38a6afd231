package value

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Readers find the objects a rule reads values from besides the object
// and its namespace: the walk of each of its owner reads (fromOwner, and
// copies from owners), and the reader of each fromRef, as the rule's
// compilation resolved them.
type Readers struct {
	Owners map[*spec.Owners]*source.Walk
	Refs   map[*spec.Refs]*source.Refer
}

// Related reads the values of from for obj from its related objects,
// which look finds. A key whose related object is not named, not
// known or lacks the key, or whose value is not valid, sets nothing; it is
// returned in missing. inputs says, by key, where each value was read.
func (r Readers) Related(from map[string]spec.RelatedKey, obj metav1.Object, look source.Lookup, valid func(string) []string) (out, inputs map[string]string, miss []Missing) {
	if len(from) == 0 {
		return nil, nil, nil
	}
	for _, k := range slices.Sorted(maps.Keys(from)) {
		rk := from[k]
		var v, input, why string
		if rk.Refs != nil {
			v, input, why = r.refValue(rk, obj, look)
		} else {
			v, input, why = rk.Source.Value(obj, look, r.Owners[rk.Owners], rk.Kind, rk.Key)
		}
		if why != "" {
			miss = append(miss, Missing{Key: k, Why: rk.Source.Field + ": " + why, Reason: ReasonSourceMissing})
			continue
		}
		if msgs := valid(v); len(msgs) > 0 {
			why = fmt.Sprintf("the value of %s (%d bytes) is not valid: %v", input, len(v), msgs)
			miss = append(miss, Missing{Key: k, Why: rk.Source.Field + ": " + why, Reason: ReasonInvalid, Value: v})
			continue
		}
		out, inputs = spec.Put(out, k, v), spec.Put(inputs, k, input)
	}
	return out, inputs, miss
}

// refValue reads the value of k, a fromRef key, for obj through
// look, as source.Source.Value does.
func (r Readers) refValue(k spec.RelatedKey, obj metav1.Object, look source.Lookup) (value, input, why string) {
	ref := r.Refs[k.Refs]
	if ref == nil {
		return "", "", fmt.Sprintf("the resource %q is not served", k.Refs.Resource)
	}
	return ref.Value(obj, look, k.Kind, k.Key)
}

// Copied returns the keys that the key sets of m (of kind) copy onto obj,
// whose namespace is home (or none, homeWhy says why), with their values
// and where each was read; cel gives the keys and values of the i-th key
// set when it is computed in CEL (or why it gives none). A key the rule
// sets otherwise or removes is not copied, and of two key sets the first
// that copies a key gives its value. problems says why a key set copied
// nothing, or a key not: its object is missing, a key or a value is not
// valid.
func (r Readers) Copied(m *spec.Metadata, obj, home metav1.Object, homeWhy string, look source.Lookup, valid func(string) []string,
	cel func(i int) (map[string]string, string)) (out, inputs map[string]string, problems []string) {
	own := m.Computed()
	maps.Copy(own, spec.KeysOf(m.Values))
	for _, k := range m.Remove {
		own[k] = ""
	}
	for i := range m.Copy {
		set := &m.Copy[i]
		from, what, why := r.keysOf(set, i, obj, home, homeWhy, look, cel)
		if why != "" {
			problems = append(problems, fmt.Sprintf("copy %s %s: %s", set.From(), set, why))
			continue
		}
		copied := set.Copied(from)
		for _, k := range slices.Sorted(maps.Keys(copied)) {
			if _, taken := own[k]; taken {
				continue
			}
			if _, taken := out[k]; taken {
				continue
			}
			v := copied[k]
			if msgs := validKey(set.Kind, k); len(msgs) > 0 {
				problems = append(problems, fmt.Sprintf("copy %s: %s %q of %s is no valid key: %v", set.From(), set.Kind, k, what, msgs))
				continue
			}
			if msgs := valid(v); len(msgs) > 0 {
				problems = append(problems, fmt.Sprintf("copy %s: the value of %s %q of %s (%d bytes) is not valid: %v", set.From(), set.Kind, k, what, len(v), msgs))
				continue
			}
			out, inputs = spec.Put(out, k, v), spec.Put(inputs, k, fmt.Sprintf("%s %q of %s", set.Kind, k, what))
		}
	}
	return out, inputs, problems
}

// keysOf returns the keys of the kind of set, the i-th key set of a rule,
// that it copies from for obj — those cel computes, or those of its
// object — and how messages name where they are read; or why there are
// none.
func (r Readers) keysOf(set *spec.KeySet, i int, obj, home metav1.Object, homeWhy string, look source.Lookup,
	cel func(i int) (map[string]string, string)) (from map[string]string, what, why string) {
	if set.CEL != "" {
		from, why = cel(i)
		return from, "cel", why
	}
	rel, what, why := r.copySource(set, obj, home, homeWhy, look)
	if why != "" {
		return nil, "", why
	}
	if set.Kind == spec.AnnotationKind {
		return rel.GetAnnotations(), what, ""
	}
	return rel.GetLabels(), what, ""
}

// validKey returns why key is no valid key of kind; nil when it is one.
// Annotation keys are checked lowercased, as the API server does.
func validKey(kind, key string) []string {
	if kind == spec.AnnotationKind {
		key = strings.ToLower(key)
	}
	return validation.IsQualifiedName(key)
}

// copySource finds the object set copies from for obj, whose namespace is
// h, and how messages name it; or why there is none.
func (r Readers) copySource(set *spec.KeySet, obj, home metav1.Object, homeWhy string, look source.Lookup) (rel metav1.Object, what, why string) {
	if set.Refs != nil {
		ref := r.Refs[set.Refs]
		if ref == nil {
			return nil, "", fmt.Sprintf("the resource %q is not served", set.Refs.Resource)
		}
		return ref.Object(obj, look)
	}
	if set.Source != source.Namespace {
		return set.Source.Object(obj, look, r.Owners[set.Owners])
	}
	if home == nil {
		return nil, "", homeWhy
	}
	return home, fmt.Sprintf("namespace %q", home.GetName()), ""
}
