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
	for _, kind := range []struct {
		name                 string
		aSet, bSet, aJP, bJP map[string]string
		aNS, bNS             map[string]rulefile.NamespaceKey
		aRm, bRm             []string
	}{
		{rulefile.AnnotationKind, a.Annotations, b.Annotations, readFrom(a.AnnotationsFrom, a.AnnotationsCEL, a.AnnotationsFromRelated),
			readFrom(b.AnnotationsFrom, b.AnnotationsCEL, b.AnnotationsFromRelated), a.AnnotationsFromNamespace, b.AnnotationsFromNamespace, a.RemoveAnnotations, b.RemoveAnnotations},
		{rulefile.LabelKind, a.Labels, b.Labels, readFrom(a.LabelsFrom, a.LabelsCEL, a.LabelsFromRelated), readFrom(b.LabelsFrom, b.LabelsCEL, b.LabelsFromRelated),
			a.LabelsFromNamespace, b.LabelsFromNamespace, a.RemoveLabels, b.RemoveLabels},
	} {
		wa, wb := wanted(kind.aSet, kind.aJP, kind.aNS, kind.aRm), wanted(kind.bSet, kind.bJP, kind.bNS, kind.bRm)
		for _, k := range slices.Sorted(maps.Keys(wa)) {
			if v, ok := wb[k]; ok && v != wa[k] {
				out = append(out, kind.name+" "+strconv.Quote(k))
			}
		}
	}
	return out
}

// wanted maps each key a rule wants to what it wants: a quoted value,
// a JSONPath template, a namespace's key, or "removed".
func wanted(set, from map[string]string, fromNS map[string]rulefile.NamespaceKey, remove []string) map[string]string {
	m := map[string]string{}
	for k, v := range set {
		m[k] = strconv.Quote(v)
	}
	for k, v := range from {
		m[k] = "from " + v
	}
	for k, v := range fromNS {
		m[k] = "from the namespace's " + v.String()
	}
	for _, k := range remove {
		m[k] = "removed"
	}
	return m
}

// readFrom maps each key a rule reads from the object or a related object
// to how it reads it: a JSONPath template, a CEL expression, or a related
// object's key.
func readFrom(jsonPath, cel map[string]string, related map[string]rulefile.RelatedKey) map[string]string {
	out := rulefile.Joined(jsonPath, cel)
	if len(related) == 0 {
		return out
	}
	out = maps.Clone(out)
	if out == nil {
		out = make(map[string]string, len(related))
	}
	for k, v := range related {
		out[k] = v.Source.Field + " " + v.String()
	}
	return out
}
