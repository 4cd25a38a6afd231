package lint

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Overlaps returns a warning for each pair of rules of f that name a
// resource alike, may select the same objects and want different things of
// one key: different values, or a value and a removal. It is conservative:
// two rules may overlap unless their literal namespaces, literal names or
// selectors (a=x against a=y) prove them disjoint. Pairs that select every
// object are Compile's conflicts, and are not repeated here.
func Overlaps(f *rulefile.File) []rulefile.FieldError {
	var out []rulefile.FieldError
	for i := range f.Rules {
		for j := i + 1; j < len(f.Rules); j++ {
			a, b := &f.Rules[i], &f.Rules[j]
			res := sharedResource(a, b)
			if res == "" || (!a.Selective() && !b.Selective()) || disjoint(a, b) {
				continue
			}
			for _, key := range differing(a, b) {
				out = append(out, rulefile.FieldError{Field: fmt.Sprintf("rules[%d]", j), Message: fmt.Sprintf(
					"rules %s and %s may both select %s and want different things of %s; where they meet, file order decides (%s)",
					a.Name, b.Name, res, key, a.Name)})
			}
		}
	}
	return out
}

// sharedResource returns a resource both rules name, as written, or "".
func sharedResource(a, b *rulefile.Rule) string {
	for _, r := range a.Resources {
		if slices.Contains(b.Resources, r) {
			return r
		}
	}
	return ""
}

// disjoint reports whether no object can be selected by both rules.
func disjoint(a, b *rulefile.Rule) bool {
	return disjointLiterals(a.Namespaces, b.Namespaces) || disjointLiterals(a.Names, b.Names) ||
		disjointSelectors(a.Selector, b.Selector) || disjointSelectors(a.NamespaceSelector, b.NamespaceSelector)
}

// disjointLiterals reports whether two glob lists, both given and without
// wildcards, share no name.
func disjointLiterals(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	for _, g := range append(slices.Clone(a), b...) {
		if strings.ContainsAny(g, `*?[\`) {
			return false
		}
	}
	return !slices.ContainsFunc(a, func(s string) bool { return slices.Contains(b, s) })
}

// disjointSelectors reports whether two selectors require one label to have
// different single values (a=x against a=y), or one requires it and the
// other its absence.
func disjointSelectors(a, b string) bool {
	ra, rb := requirements(a), requirements(b)
	for _, x := range ra {
		for _, y := range rb {
			if x.Key() != y.Key() {
				continue
			}
			xv, xok := single(x)
			yv, yok := single(y)
			switch {
			case xok && yok && xv != yv:
				return true
			case xok && y.Operator() == selection.DoesNotExist, yok && x.Operator() == selection.DoesNotExist:
				return true
			}
		}
	}
	return false
}

func requirements(s string) labels.Requirements {
	if s == "" {
		return nil
	}
	sel, err := labels.Parse(s)
	if err != nil {
		return nil
	}
	reqs, _ := sel.Requirements()
	return reqs
}

// single returns the one value a requirement allows, if it allows one.
func single(r labels.Requirement) (string, bool) {
	switch r.Operator() {
	case selection.Equals, selection.DoubleEquals, selection.In:
		if r.Values().Len() == 1 {
			return r.Values().List()[0], true
		}
	}
	return "", false
}

// differing lists the keys the two rules want different things of, as
// `annotation "k"`.
func differing(a, b *rulefile.Rule) []string {
	var out []string
	for _, kind := range []string{rulefile.AnnotationKind, rulefile.LabelKind} {
		wa, wb := wanted(a.Of(kind)), wanted(b.Of(kind))
		for _, k := range slices.Sorted(maps.Keys(wa)) {
			if v, ok := wb[k]; ok && v != wa[k] {
				out = append(out, kind+" "+strconv.Quote(k))
			}
		}
	}
	return out
}

// wanted maps each key m sets or removes to what it wants: a quoted
// value, how the value is read (a JSONPath template, a CEL expression, a
// related object's key), or "removed".
func wanted(m *rulefile.Metadata) map[string]string {
	out := map[string]string{}
	for k, v := range m.Values {
		out[k] = strconv.Quote(v)
	}
	for k, v := range spec.Joined(m.From, m.CEL) {
		out[k] = "from " + v
	}
	for k, v := range m.FromRelated {
		out[k] = "from " + v.Source.Field + " " + v.String()
	}
	for k, v := range m.FromNamespace {
		out[k] = "from the namespace's " + v.String()
	}
	for _, k := range m.Remove {
		out[k] = "removed"
	}
	return out
}
