package verdict

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
)

// Verdict is what one rule makes of one object.
type Verdict struct {
	// Rule is the rule's name; Index its position in the file.
	Rule  string `json:"rule"`
	Index int    `json:"index"`
	// Mode is the rule's mode, enforce or audit.
	Mode string `json:"mode"`
	// Selects says whether the rule applies to the object.
	Selects bool `json:"selects"`
	// Reason says, when the rule does not apply, which of its selection
	// fields the object fails, or that the namespaces excluded from every
	// rule (Excluded) leave it out.
	Reason string `json:"reason,omitempty"`
	// Excluded says which of the namespaces excluded from every rule
	// (Set.ExcludeNamespaces) leaves the object out, when one does.
	Excluded *Exclusion `json:"excluded,omitempty"`
	// When is the rule's when condition, with what it read, when the
	// object passes the rule's other selection fields.
	When *Condition `json:"when,omitempty"`
	// Wants are the keys the rule wants of the object, when it applies.
	Wants []Want `json:"wants,omitempty"`
	// Problems are values the rule could not read from the object.
	Problems []string `json:"problems,omitempty"`
}

// Exclusion is a namespace glob excluded from every rule, and the
// namespace it matched.
type Exclusion struct {
	Glob      string `json:"glob"`
	Namespace string `json:"namespace"`
}

// Want is one key a rule wants: set to Value, or removed when Value is nil.
type Want struct {
	// Kind is "annotation" or "label".
	Kind  string  `json:"kind"`
	Key   string  `json:"key"`
	Value *string `json:"value"`
	// IfAbsent says Value is set only where the key is absent (or the
	// controller's own).
	IfAbsent bool `json:"ifAbsent,omitempty"`
	// Once says Value is recorded: set where the key is absent, then kept
	// as it is, whatever its source becomes.
	Once bool `json:"once,omitempty"`
	// Defaulted says why Value is the rule's default: the source of the
	// computed value is missing.
	Defaulted string `json:"defaulted,omitempty"`
	// MadeValid says how Value was made a valid label value, as the
	// rule's ifInvalid asks: "truncated from 91 characters".
	MadeValid string `json:"madeValid,omitempty"`
	// From says how Value is computed (cel, jsonPath or fromNamespace, as
	// in the file); empty for a literal. Inputs are the fields it reads,
	// with their values, where explain can name them.
	From   string  `json:"from,omitempty"`
	Inputs []Input `json:"inputs,omitempty"`
	// Input says where Value was read, for a value read from a related
	// object: `label "topology.kubernetes.io/zone" of Node "node-1"`.
	Input string `json:"input,omitempty"`
}

// Condition is a rule's when condition as evaluated for one object.
type Condition struct {
	// Expression is the condition as the file gives it.
	Expression string `json:"expression"`
	// Holds says whether it yielded true.
	Holds bool `json:"holds"`
	// Inputs are the fields it reads, with their values on the object.
	Inputs []Input `json:"inputs,omitempty"`
}

// Input is one field an expression or a value reads, and what the object
// (or its namespace) holds there.
type Input struct {
	// Field is the field in CEL's terms: object.spec.replicas,
	// namespaceObject.metadata.labels['team'].
	Field string `json:"field"`
	// Value is the field's value as JSON, cut to a line's worth; nil when
	// the field is absent.
	Value *string `json:"value"`
}

// MaxInputLen bounds an input's value as explain shows it (a field may
// hold a whole Pod template).
const MaxInputLen = 80

// celIdent matches a field name CEL can select with a dot.
var celIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// FieldName writes path under root as CEL would select it.
func FieldName(root string, path []string) string {
	s := root
	for _, f := range path {
		if celIdent.MatchString(f) {
			s += "." + f
		} else {
			s += "['" + f + "']"
		}
	}
	return s
}

// ValueAt returns the value at path in content as JSON, cut to
// MaxInputLen; nil when absent.
func ValueAt(content map[string]any, path []string) *string {
	v, missingAt, ok := celexpr.ContentValue(content, path)
	if !ok || missingAt >= 0 {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return PtrTo(fmt.Sprintf("%v", v))
	}
	s := string(b)
	if len(s) > MaxInputLen {
		s = s[:MaxInputLen] + "…"
	}
	return &s
}

func PtrTo(s string) *string { return &s }
