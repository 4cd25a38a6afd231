package rules

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// maxEvaluations bounds the evaluations a selectionMemo keeps, in entries
// of each of its two generations.
const maxEvaluations = 1024

// selectionMemo keeps the evaluations of a target whose rules want
// literal values and values computed in CEL only (memoizable), by the
// rules that select an object and what their CEL values yield for it:
// what such rules want of an object depends on nothing else, so an object
// costs the target only the test of each rule's selection and its CEL
// values, which their own memos mostly answer (see celexpr.Expr.EvalOn).
type selectionMemo struct {
	celexpr.Memo[*Evaluation]
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
	return &selectionMemo{celexpr.Memo[*Evaluation]{Max: maxEvaluations}}
}

// memoizable reports whether what the rule wants of an object it selects
// depends on nothing but what its CEL values yield: none of its values is
// read with JSONPath, from the object's namespace or from a related
// object.
func (c *Compiled) memoizable() bool {
	return !c.readsFields() && !c.ReadsNamespace() && !c.readsRelated()
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
	if !m.Use() {
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
			v, err := e.EvalOn(obj, t.isNamespaces(), namespaces)
			key = appendOutcome(key, v, err)
			outcomes = append(outcomes, evaluated{e, celexpr.Outcome{Value: v, Err: err}})
		}
	}
	if e, ok := m.Get(key); ok {
		return e
	}
	// outcomes is kept on the stack: what evaluate is given leaves it.
	e := t.evaluate(obj, namespaces, slices.Clone(outcomes), func(i int) bool { return selected&(1<<i) != 0 })
	if len(key) <= celexpr.MaxInputKey {
		m.Put(string(key), e)
	}
	return e
}

// evaluated is a CEL expression and its outcome on an object.
type evaluated struct {
	expr *celexpr.Expr
	celexpr.Outcome
}

// appendOutcome appends to key what celValues (or a copy computed in
// CEL) makes of a CEL value's result: the string, each key and value of
// the map, the error, or the type it is not a string of.
func appendOutcome(key []byte, v any, err error) []byte {
	tag, s := byte('s'), ""
	m, isMap := v.(map[string]string)
	switch x, isString := v.(string); {
	case err != nil:
		tag, s = 'e', err.Error()
	case isString:
		s = x
	case isMap:
		key = binary.AppendUvarint(append(key, 'm'), uint64(len(m)))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			key = appendString(appendString(key, k), m[k])
		}
		return key
	default:
		tag, s = 't', fmt.Sprintf("%T", v)
	}
	return appendString(append(key, tag), s)
}

// appendString appends s to key, after its length.
func appendString(key []byte, s string) []byte {
	key = binary.AppendUvarint(key, uint64(len(s)))
	return append(key, s...)
}
