package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/value"
)

// RelatedSources returns the sources the rules of t read values from,
// in source.Order.
func (t *Target) RelatedSources() []*source.Source {
	var out []*source.Source
	for _, r := range t.Rules {
		out = source.Union(out, r.RelatedSources())
	}
	return out
}

// RelatedSources returns the sources that any rule of s reads values
// from, in source.Order.
func (s *Set) RelatedSources() []*source.Source {
	var out []*source.Source
	for _, t := range s.Targets {
		out = source.Union(out, t.RelatedSources())
	}
	return out
}

// RelatedKeys returns, sorted, the keys of src's objects that the rules of
// t read, as RelatedKeys.
func (t *Target) RelatedKeys(src *source.Source) []rulefile.RelatedKey {
	var out []rulefile.RelatedKey
	for _, r := range t.Rules {
		for _, m := range []map[string]rulefile.RelatedKey{r.Annotations.FromRelated, r.Labels.FromRelated} {
			for _, k := range m {
				if r.reads(k, src) && !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b rulefile.RelatedKey) int { return strings.Compare(a.Kind+"/"+a.Key, b.Kind+"/"+b.Key) })
	return out
}

// relatedRefs returns the fields of an object that the rule reads to find
// its related objects.
func (c *Compiled) relatedRefs() [][]string {
	var out [][]string
	add := func(src *source.Source, ref []string) {
		if src.IsOwner || ref == nil {
			return // a metadata cache keeps owners (Projection.Owners); a name given is no field
		}
		if !slices.ContainsFunc(out, func(p []string) bool { return slices.Equal(p, ref) }) {
			out = append(out, ref)
		}
	}
	for _, kind := range kinds {
		m := c.Of(kind)
		for _, k := range m.FromRelated {
			ref := k.Source.Ref
			if k.Refs != nil {
				ref = k.Refs.Field // nil for a name given
			}
			add(k.Source, ref)
		}
		for _, set := range m.Copy {
			add(set.Source, set.Source.Ref)
		}
	}
	return out
}

// readsRelated reports whether the rule reads values, or copies key sets,
// from related objects besides the namespace.
func (c *Compiled) readsRelated() bool {
	return len(c.Rule.RelatedSources()) > 0
}

// relatedValues reads the values of from for obj from its related objects,
// which look finds. A key whose related object is not named, not
// known or lacks the key, or whose value is not valid, sets nothing; it is
// returned in missing. inputs says, by key, where each value was read.
func (c *Compiled) relatedValues(from map[string]rulefile.RelatedKey, obj metav1.Object, look source.Lookup, valid func(string) []string) (out, inputs map[string]string, miss []value.Missing) {
	if len(from) == 0 {
		return nil, nil, nil
	}
	for _, k := range slices.Sorted(maps.Keys(from)) {
		rk := from[k]
		var v, input, why string
		if rk.Refs != nil {
			v, input, why = c.refValue(rk, obj, look)
		} else {
			v, input, why = rk.Source.Value(obj, look, c.owners[rk.Owners], rk.Kind, rk.Key)
		}
		if why != "" {
			miss = append(miss, value.Missing{Key: k, Why: rk.Source.Field + ": " + why, Reason: ReasonSourceMissing})
			continue
		}
		if msgs := valid(v); len(msgs) > 0 {
			why = fmt.Sprintf("the value of %s (%d bytes) is not valid: %v", input, len(v), msgs)
			miss = append(miss, value.Missing{Key: k, Why: rk.Source.Field + ": " + why, Reason: ReasonInvalid, Value: v})
			continue
		}
		out, inputs = put(out, k, v), put(inputs, k, input)
	}
	return out, inputs, miss
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
