package rules

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
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

// Explain returns, for every rule of t in file order, whether it selects
// obj and, if not, why; and, if so, what it wants of obj. Like Evaluate,
// it only reads obj.
func (t *Target) Explain(obj metav1.Object, namespaces source.Lookup) []Verdict {
	excluded, ns := t.excludedBy(obj)
	h := home{look: namespaces, isNamespace: t.isNamespaces()}
	if t.ReadsNamespaces {
		h.obj, h.why = t.home(obj, namespaces)
	}
	out := make([]Verdict, 0, len(t.Rules))
	for _, r := range t.Rules {
		v := Verdict{Rule: r.Name, Index: r.Index, Mode: r.EffectiveMode()}
		switch {
		case excluded != "":
			v.Reason = fmt.Sprintf("the namespaces excluded from every rule (%q) leave out namespace %q", excluded, ns)
			v.Excluded = &Exclusion{Glob: excluded, Namespace: ns}
		default:
			v.Reason = r.Unselected(obj, t.isNamespaces(), namespaces)
		}
		v.Selects = v.Reason == ""
		if excluded == "" && r.unselectedBy(obj, t.isNamespaces(), namespaces) == "" {
			v.When = r.condition(obj, h, v.Selects)
		}
		if v.Selects {
			w := r.alone(obj, h)
			v.Wants, v.Problems = wants(w), w.Problems
			for i, want := range v.Wants {
				if want.Value != nil {
					v.Wants[i].From, v.Wants[i].Inputs = r.source(want.Kind, want.Key, obj, h)
				}
			}
		}
		out = append(out, v)
	}
	return out
}

// wants lists what e wants, annotations before labels, each sorted by key.
func wants(e *Evaluation) []Want {
	var out []Want
	for _, kind := range []struct {
		name     string
		set      map[string]string
		ifAbsent map[string]bool
		remove   []string
	}{
		{rulefile.AnnotationKind, e.Desired.Annotations, e.Desired.IfAbsentAnnotations, e.Desired.RemoveAnnotations},
		{rulefile.LabelKind, e.Desired.Labels, e.Desired.IfAbsentLabels, e.Desired.RemoveLabels},
	} {
		var ws []Want
		for k, v := range kind.set {
			ws = append(ws, Want{Kind: kind.name, Key: k, Value: &v, IfAbsent: kind.ifAbsent[k], Defaulted: e.Defaulted(kind.name, k),
				MadeValid: e.madeValid[keyOf{kind.name, k}], Input: e.Input(kind.name, k)})
		}
		for _, k := range kind.remove {
			ws = append(ws, Want{Kind: kind.name, Key: k})
		}
		slices.SortFunc(ws, func(a, b Want) int { return cmp.Compare(a.Key, b.Key) })
		out = append(out, ws...)
	}
	return out
}
