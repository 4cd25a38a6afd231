package rules

import (
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/rules/value"
)

// Why a computed value is missing, as the metrics and diff count it: the
// reasons of package value, which says what each means.
const (
	ReasonError         = value.ReasonError
	ReasonInvalid       = value.ReasonInvalid
	ReasonSourceMissing = value.ReasonSourceMissing
)

// Reasons are the reasons a computed value is missing, in the order the
// metrics list them.
var Reasons = value.Reasons

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
func (e *Evaluation) orDefault(values map[string]string, miss []value.Missing, m *rulefile.Metadata, fallback value.Level, rule, kind string) map[string]string {
	for _, mm := range miss {
		s := value.Settle(m, mm, fallback)
		if s.MadeValid != "" {
			values, e.madeValid = spec.Put(values, mm.Key, s.Value), spec.Put(e.madeValid, keyOf{kind, mm.Key}, s.MadeValid)
			continue
		}
		failed := s.Missing.Reason == ReasonError
		if failed {
			if _, ok := e.held[keyOf{kind, mm.Key}]; !ok {
				e.held = spec.Put(e.held, keyOf{kind, mm.Key}, rule)
			}
		}
		if failed || !s.OK {
			e.Unset = append(e.Unset, Unset{Rule: rule, Kind: kind, Key: mm.Key, Reason: s.Missing.Reason})
		}
		if !s.OK {
			why := rule + ": " + mm.Key + ": " + s.Missing.Why
			if failed {
				why += " (a value the object has is kept)"
			}
			e.Problems = append(e.Problems, why)
			continue
		}
		values = spec.Put(values, mm.Key, s.Value)
		if _, taken := e.setBy[keyOf{kind, mm.Key}]; !taken {
			e.defaulted = spec.Put(e.defaulted, keyOf{kind, mm.Key}, s.Defaulted)
			if mm.AdmissionOnly {
				e.unrecorded = spec.Put(e.unrecorded, keyOf{kind, mm.Key}, true)
			}
		}
	}
	return values
}

// Defaulted returns why the default of the key of kind ("annotation" or
// "label") is set on the object, or "" when its value was read.
func (e *Evaluation) Defaulted(kind, key string) string { return e.defaulted[keyOf{kind, key}] }

// Unrecorded reports whether the key of kind holds its default for want of
// the admission request its value is read from (celexpr.ErrAdmissionOnly).
func (e *Evaluation) Unrecorded(kind, key string) bool { return e.unrecorded[keyOf{kind, key}] }

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
