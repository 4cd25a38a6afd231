package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/glob"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// Flow is a value a rule writes on the objects of one resource from a key
// of objects of another, or the same, resource: a value read from a
// related object, or a copy.
type Flow struct {
	// Rule is the rule's index, Field its field that reads ("labels.team.fromRef").
	Rule  int
	Field string
	// To is the resource written, Kind and Key the key written (a glob,
	// for a copy).
	To, Kind, Key string
	// From is the resource read, FromKind and FromKey the key read.
	From, FromKind, FromKey string
}

// feeds reports whether what f writes may be what g reads.
func (f Flow) feeds(g Flow) bool {
	return f.To == g.From && f.Kind == g.FromKind && keysMeet(f.Key, g.FromKey)
}

// identity reports whether f writes a key from the same key of the same
// resource: a copy, which changes no key into another, so that no cycle
// needs it (a Namespace's own label, a ConfigMap's from another's).
func (f Flow) identity() bool {
	return f.To == f.From && f.Kind == f.FromKind && f.Key == f.FromKey
}

// keysMeet reports whether a key, or glob of keys, a and b may name one
// key.
func keysMeet(a, b string) bool {
	return a == b || glob.MatchKey(a, b) || glob.MatchKey(b, a)
}

// SourceCycles reports, once per cycle, flows of rules whose values are
// read round a cycle: a key written from another resource's key that is
// itself written, through other flows, from the first. Such values chase
// each other instead of settling, so the rules are refused, as selector
// cycles are, at their lines in f. A copy of a key to the same key (a
// Namespace's own label) is in no cycle.
func SourceCycles(f *rulefile.File, flows []Flow) []rulefile.FieldError {
	flows = slices.DeleteFunc(slices.Clone(flows), Flow.identity)
	var out []rulefile.FieldError
	reported := map[int]bool{}
	for start := range flows {
		if reported[start] {
			continue
		}
		path := flowCycle(flows, start)
		if len(path) < 2 {
			continue
		}
		var steps []string
		for _, i := range path {
			reported[i] = true
			fl := flows[i]
			steps = append(steps, fmt.Sprintf("rules[%d] (%s) writes %s %q of %s from %s %q of %s",
				fl.Rule, f.Rules[fl.Rule].Name, fl.Kind, fl.Key, fl.To, fl.FromKind, fl.FromKey, fl.From))
		}
		first := flows[path[0]]
		field := fmt.Sprintf("rules[%d].%s", first.Rule, first.Field)
		out = append(out, rulefile.FieldError{Line: f.Line(field), Field: field, Message: fmt.Sprintf(
			"values are read round a cycle, which never settles: %s; read one of them from elsewhere, or set it literally",
			strings.Join(steps, ", and "))})
	}
	return out
}

// flowCycle returns a cycle of flows through start, in the order the
// values flow (each read by the next), or nil.
func flowCycle(flows []Flow, start int) []int {
	prev := map[int]int{}
	queue := []int{start}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for y := range flows {
			if !flows[x].feeds(flows[y]) {
				continue
			}
			if y == start {
				if x == start {
					continue // a flow that feeds only itself
				}
				path := []int{x}
				for p := x; p != start; {
					p = prev[p]
					path = append(path, p)
				}
				slices.Reverse(path)
				return path
			}
			if _, seen := prev[y]; !seen {
				prev[y] = x
				queue = append(queue, y)
			}
		}
	}
	return nil
}
