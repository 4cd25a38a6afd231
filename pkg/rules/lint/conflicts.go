package lint

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// StaticConflicts finds pairs of the rules of f at indexes, which all name
// resource, that select every object of it and want different things of
// one key: different literal values, a literal and a value read from the
// object, or a value and a removal.
func StaticConflicts(f *rulefile.File, indexes []int, resource string) []rulefile.FieldError {
	var out []rulefile.FieldError
	type claim struct {
		rule  *rulefile.Rule
		index int
		what  string // `"v"`, "read from the object" or "removed"
	}
	claims := map[string]claim{} // kind/key → first claim
	for _, i := range indexes {
		r := &f.Rules[i]
		if r.Selective() {
			continue
		}
		// what is a quoted value, or how the value is read.
		add := func(kind, key, what string, field string) {
			k := kind + "/" + key
			prev, ok := claims[k]
			if !ok {
				claims[k] = claim{rule: r, index: i, what: what}
				return
			}
			if prev.rule == r || (strings.HasPrefix(what, `"`) && prev.what == what) {
				return
			}
			out = append(out, rulefile.FieldError{
				Field: fmt.Sprintf("rules[%d].%s", i, field),
				Message: fmt.Sprintf("conflicts with rules[%d] (%s), which also applies to every object of %s: %s %q is %s here (%s) and %s there",
					prev.index, prev.rule.Name, resource, kind, key, what, r.Name, prev.what),
			})
		}
		for _, kind := range []string{rulefile.AnnotationKind, rulefile.LabelKind} {
			m, field := r.Of(kind), kind+"s"
			for _, k := range slices.Sorted(maps.Keys(m.Values)) {
				add(kind, k, strconv.Quote(m.Values[k]), field+"."+k)
			}
			for _, k := range slices.Sorted(maps.Keys(spec.Joined(m.From, m.CEL))) {
				add(kind, k, "read from the object", field+"."+k)
			}
			for _, k := range slices.Sorted(maps.Keys(m.FromNamespace)) {
				add(kind, k, "read from the namespace's "+m.FromNamespace[k].String(), field+"."+k)
			}
			for _, k := range slices.Sorted(maps.Keys(m.FromRelated)) {
				add(kind, k, "read from "+m.FromRelated[k].Source.What+"'s "+m.FromRelated[k].String(), field+"."+k)
			}
			for j, k := range m.Remove {
				add(kind, k, "removed", fmt.Sprintf("remove%s[%d]", strings.ToUpper(field[:1])+field[1:], j))
			}
		}
	}
	return out
}
