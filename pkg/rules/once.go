package rules

import (
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// recordOnce records rule as the rule whose once keys of kind are keys:
// see Recorded.
func (e *Evaluation) recordOnce(keys map[string]bool, rule, kind string) {
	for k := range keys {
		if _, ok := e.once[keyOf{kind, k}]; !ok {
			e.once = spec.Put(e.once, keyOf{kind, k}, rule)
		}
	}
}

// Recorded returns, sorted, the keys of kind ("annotation" or "label")
// that the rule setting them records (once: true), and that no other rule
// sets: an object that carries one keeps the value it has, neither
// changed nor deleted, whatever its source becomes. Where the object
// lacks the key, Desired holds the value read, or the rule's default.
func (e *Evaluation) Recorded(kind string) []string {
	var out []string
	for k, rule := range e.once {
		if by, ok := e.setBy[k]; k.kind == kind && (!ok || by == rule) {
			out = append(out, k.key)
		}
	}
	slices.Sort(out)
	return out
}
