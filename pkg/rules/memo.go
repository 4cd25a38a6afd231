package rules

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Bounds of the memos, in entries of each of their two generations.
const (
	// maxEvaluations bounds the evaluations a selectionMemo keeps.
	maxEvaluations = 1024
	// maxResults bounds the results a CEL expression's memo keeps.
	maxResults = 4096
)

// memo keeps values by key, safe for concurrent use. It holds at most
// 2×max of them, in two generations: when the newer is full it becomes
// the older, and the older is dropped; a value found in the older is moved
// to the newer. Values used again and again stay while keys seen once
// pass through. A memo that is rarely of use — fewer hits than a quarter
// of max while a generation filled, after the first — is not asked for
// the next 8×max lookups (see use), so that keys never seen twice cost
// little more than no memo.
type memo[V any] struct {
	max      int
	mu       sync.RWMutex
	new, old map[string]V
	hits     atomic.Int64 // since new was made
	skip     atomic.Int64 // lookups use declines still
}

// use reports whether the memo is worth building a key for and asking.
func (m *memo[V]) use() bool {
	if m.skip.Load() <= 0 {
		return true
	}
	m.skip.Add(-1)
	return false
}

// get returns the value kept for key.
func (m *memo[V]) get(key []byte) (V, bool) {
	m.mu.RLock()
	v, ok := m.new[string(key)]
	promote := false
	if !ok {
		v, ok = m.old[string(key)]
		promote = ok
	}
	m.mu.RUnlock()
	if ok {
		m.hits.Add(1)
	}
	if promote {
		m.put(string(key), v)
	}
	return v, ok
}

// put keeps v for key.
func (m *memo[V]) put(key string, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.new == nil || len(m.new) >= m.max {
		if m.old != nil && m.hits.Load() < int64(m.max/4) {
			m.skip.Store(int64(8 * m.max))
		}
		m.old, m.new = m.new, make(map[string]V)
		m.hits.Store(0)
	}
	m.new[key] = v
}

// selectionMemo keeps the evaluations of a target whose rules want
// literal values and values computed in CEL only (memoizable), by the
// rules that select an object and what their CEL values yield for it:
// what such rules want of an object depends on nothing else, so an object
// costs the target only the test of each rule's selection and its CEL
// values, which their own memos mostly answer (see celExpr.evalOn).
type selectionMemo struct {
	memo[*Evaluation]
}

// newSelectionMemo returns a memo for t, or nil when t's evaluations
// depend on more than which rules select an object and what their CEL
// values yield: a rule reads a value some other way, or t has more rules
// than a selection's bits.
func newSelectionMemo(t *Target) *selectionMemo {
	if len(t.Rules) > 64 {
		return nil
	}
	for _, r := range t.Rules {
		if !r.memoizable() {
			return nil
		}
	}
	return &selectionMemo{memo[*Evaluation]{max: maxEvaluations}}
}

// memoizable reports whether what the rule wants of an object it selects
// depends on nothing but what its CEL values yield: none of its values is
// read with JSONPath, from the object's namespace or from a related
// object.
func (c *Compiled) memoizable() bool {
	return len(c.annotationsFrom)+len(c.labelsFrom) == 0 && !c.ReadsNamespace() && !c.readsRelated()
}

// evaluate returns what the rules of t want of obj, shared with every
// object the same rules select and whose CEL values yield the same.
func (m *selectionMemo) evaluate(t *Target, obj metav1.Object, namespaces source.Lookup) *Evaluation {
	var selected uint64
	for i, r := range t.Rules {
		if r.Selects(obj, t.isNamespaces(), namespaces) {
			selected |= 1 << i
		}
	}
	if !m.use() {
		return t.evaluate(obj, namespaces, nil, func(i int) bool { return selected&(1<<i) != 0 })
	}
	var buf [128]byte
	key := binary.BigEndian.AppendUint64(buf[:0], selected)
	var done [4]evaluated
	outcomes := done[:0]
	for i, r := range t.Rules {
		if selected&(1<<i) == 0 {
			continue
		}
		for _, e := range r.values {
			v, err := e.evalOn(obj, t.isNamespaces(), namespaces)
			key = appendOutcome(key, v, err)
			outcomes = append(outcomes, evaluated{e, celOutcome{v, err}})
		}
	}
	if e, ok := m.get(key); ok {
		return e
	}
	// outcomes is kept on the stack: what evaluate is given leaves it.
	e := t.evaluate(obj, namespaces, slices.Clone(outcomes), func(i int) bool { return selected&(1<<i) != 0 })
	if len(key) <= maxInputKey {
		m.put(string(key), e)
	}
	return e
}

// evaluated is a CEL expression and its outcome on an object.
type evaluated struct {
	expr *celExpr
	celOutcome
}

// appendOutcome appends to key what celValues makes of a CEL value's
// result: the string, the error, or the type it is not a string of.
func appendOutcome(key []byte, v any, err error) []byte {
	tag, s := byte('s'), ""
	switch x, isString := v.(string); {
	case err != nil:
		tag, s = 'e', err.Error()
	case isString:
		s = x
	default:
		tag, s = 't', fmt.Sprintf("%T", v)
	}
	key = binary.AppendUvarint(append(key, tag), uint64(len(s)))
	return append(key, s...)
}
