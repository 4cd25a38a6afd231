package rules

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxSelections bounds the evaluations a selectionMemo keeps; past it,
// objects selected by a new set of rules are evaluated each time.
const maxSelections = 1024

// selectionMemo keeps the evaluations of a target whose rules all want
// values that are the same on every object they select (literalValues),
// by the set of rules that select an object: what such rules want of an
// object depends on nothing else, so an object costs the target only the
// test of each rule's selection. It is safe for concurrent use.
type selectionMemo struct {
	mu sync.RWMutex
	by map[uint64]*Evaluation // by the selecting rules, bit i for Rules[i]
}

// newSelectionMemo returns a memo for t, or nil when t's evaluations
// depend on more than which rules select an object: a rule reads a
// value, or t has more rules than a selection's bits.
func newSelectionMemo(t *Target) *selectionMemo {
	if len(t.Rules) > 64 {
		return nil
	}
	for _, r := range t.Rules {
		if !r.literalValues() {
			return nil
		}
	}
	return &selectionMemo{by: map[uint64]*Evaluation{}}
}

// literalValues reports whether the rule wants the same of every object it
// selects: none of its values is read from the object, its namespace or a
// related object.
func (c *Compiled) literalValues() bool {
	return len(c.annotationsFrom)+len(c.labelsFrom)+len(c.annotationsCEL)+len(c.labelsCEL) == 0 &&
		!c.ReadsNamespace() && !c.readsRelated()
}

// evaluate returns what the rules of t want of obj, shared with every
// object the same rules select.
func (m *selectionMemo) evaluate(t *Target, obj metav1.Object, namespaces Namespaces) *Evaluation {
	var selected uint64
	for i, r := range t.Rules {
		if r.Selects(obj, t.isNamespaces(), namespaces) {
			selected |= 1 << i
		}
	}
	m.mu.RLock()
	e, ok := m.by[selected]
	m.mu.RUnlock()
	if ok {
		return e
	}
	e = t.evaluate(obj, namespaces, func(i int) bool { return selected&(1<<i) != 0 })
	m.mu.Lock()
	if len(m.by) < maxSelections {
		m.by[selected] = e
	}
	m.mu.Unlock()
	return e
}
