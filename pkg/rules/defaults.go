package rules

import (
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/rules/labelvalue"
)

// Why a computed value is missing, as the metrics and diff count it.
const (
	// ReasonError: the expression failed (a CEL error, or a result that
	// is not a string). An object that carries the key keeps the value it
	// has: it is neither changed nor deleted until the expression yields
	// again; one that does not gets the default, if the rule gives one.
	ReasonError = "error"
	// ReasonInvalid: the value read or computed is not a valid value for
	// the key (for a label: 63 characters at most, of a restricted set).
	ReasonInvalid = "invalid"
	// ReasonSourceMissing: the field, the namespace key or the related
	// object the value is read from is absent. The key is unset (deleted,
	// where the controller set it) unless the rule gives a default.
	ReasonSourceMissing = "source-missing"
)

// Reasons are the reasons a computed value is missing, in the order the
// metrics list them.
var Reasons = []string{ReasonError, ReasonInvalid, ReasonSourceMissing}

// missing is a computed value that could not be read — its source lacks
// it, holds no valid value, or its expression failed — why, and the
// reason, one of Reasons; value is the value read, when not valid.
type missing struct {
	key, why, reason, value string
}

// Unset is a key that a rule wants on an object but could not compute a
// value for, and why, as one of Reasons: every failed expression, and a
// missing or invalid value for which the rule gives no default.
type Unset struct {
	Rule, Kind, Key, Reason string
}

// orDefault returns values, the computed values of keys of kind that rule
// read, with each invalid value of miss made valid where ifInvalid says
// how (labelvalue.MakeValid), and the rule's default set for each other
// key of miss that has one (each recorded, with how or why, for
// explanations). Keys of miss without a default stay unset and are
// reported in e.Problems; failed expressions are reported whether or not
// there is a default, and their keys are held (see Held). Every computed
// value form reads through it, so each is made valid and takes a default
// the same way.
func (e *Evaluation) orDefault(values map[string]string, miss []missing, defaults, ifInvalid map[string]string, rule, kind string) map[string]string {
	for _, m := range miss {
		if mode := ifInvalid[m.key]; m.reason == ReasonInvalid && mode != "" {
			v, how, ok := labelvalue.MakeValid(mode, m.value)
			if ok {
				values, e.madeValid = put(values, m.key, v), put(e.madeValid, keyOf{kind, m.key}, how)
				continue
			}
			m.why += " (ifInvalid: " + mode + " leaves no valid label value)"
		}
		failed := m.reason == ReasonError
		if failed {
			if _, ok := e.held[keyOf{kind, m.key}]; !ok {
				e.held = put(e.held, keyOf{kind, m.key}, rule)
			}
		}
		d, ok := defaults[m.key]
		if failed || !ok {
			e.Unset = append(e.Unset, Unset{Rule: rule, Kind: kind, Key: m.key, Reason: m.reason})
		}
		if !ok {
			why := rule + ": " + m.key + ": " + m.why
			if failed {
				why += " (a value the object has is kept)"
			}
			e.Problems = append(e.Problems, why)
			continue
		}
		values = put(values, m.key, d)
		if _, taken := e.setBy[keyOf{kind, m.key}]; !taken {
			e.defaulted = put(e.defaulted, keyOf{kind, m.key}, m.why)
		}
	}
	return values
}

// Defaulted returns why the default of the key of kind ("annotation" or
// "label") is set on the object, or "" when its value was read.
func (e *Evaluation) Defaulted(kind, key string) string { return e.defaulted[keyOf{kind, key}] }

// Held returns, sorted, the keys of kind ("annotation" or "label") whose
// value the rule that sets them failed to compute (ReasonError), and that
// no other rule sets: an object that carries one keeps the value it has,
// neither changed nor deleted, until the expression yields again. Where
// the object lacks the key, Desired holds the rule's default, if any.
func (e *Evaluation) Held(kind string) []string {
	var out []string
	for k, rule := range e.held {
		if by, ok := e.setBy[k]; k.kind == kind && (!ok || by == rule) {
			out = append(out, k.key)
		}
	}
	slices.Sort(out)
	return out
}
