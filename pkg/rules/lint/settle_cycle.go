package lint

import (
	"fmt"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// step is one link of a cycle: the rule whose selector tests key, through
// field, and the rule that sets key.
type step struct {
	rule, setter int
	field, key   string
}

// Cycles reports, once per cycle, rules among group (indexes into rules,
// on one resource) whose selectors test labels the others set, round to
// the first: see Unsettled. Rules already in reported are not reported
// again; the rules of each cycle found are added.
func Cycles(rules []rulefile.Rule, group []int, namespaces bool, reported map[int]bool) []rulefile.FieldError {
	var out []rulefile.FieldError
	for _, a := range group {
		if reported[a] {
			continue
		}
		path := cycleFrom(rules, group, namespaces, a)
		if path == nil {
			continue
		}
		for _, s := range path {
			reported[s.rule] = true
		}
		out = append(out, cycleError(rules, path))
	}
	return out
}

// cycleFrom returns the shortest cycle from rule a back to itself through
// other rules, or nil. Each step goes from a rule to another that sets a
// label its selector tests.
func cycleFrom(rules []rulefile.Rule, group []int, namespaces bool, a int) []step {
	prev := map[int]step{} // rule reached → the step that reached it
	queue := []int{a}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, t := range labelTests(&rules[x], namespaces) {
			for _, b := range group {
				if b == x {
					continue
				}
				if _, sets := labelWritesOf(&rules[b]).of(t.req.Key()); !sets {
					continue
				}
				if _, seen := prev[b]; seen {
					continue
				}
				prev[b] = step{rule: x, setter: b, field: t.field, key: t.req.Key()}
				if b == a {
					return unwind(prev, a)
				}
				queue = append(queue, b)
			}
		}
	}
	return nil
}

// unwind follows prev back from a to a, returning the steps in order.
func unwind(prev map[int]step, a int) []step {
	var path []step
	for s := prev[a]; ; s = prev[s.rule] {
		path = append([]step{s}, path...)
		if s.rule == a {
			return path
		}
	}
}

// cycleError describes a cycle at the selector of its first rule.
func cycleError(rules []rulefile.Rule, path []step) rulefile.FieldError {
	first := path[0]
	var b strings.Builder
	fmt.Fprintf(&b, "tests label %q", first.key)
	for i, s := range path {
		if s.setter == first.rule {
			b.WriteString(", which this rule sets")
			break
		}
		fmt.Fprintf(&b, ", set by rules[%d] (%s), whose %s tests label %q", s.setter, rules[s.setter].Name, path[i+1].field, path[i+1].key)
	}
	b.WriteString(" on the same resource: each rule's write decides whether the next selects the object, and the controller writes " +
		"them together, so their labels can be added and deleted without end; select by a label no rule sets, or merge the rules")
	return rulefile.FieldError{Field: fmt.Sprintf("rules[%d].%s", first.rule, first.field), Message: b.String()}
}
