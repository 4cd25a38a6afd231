package rules

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

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

// maxInputLen bounds an input's value as explain shows it (a field may
// hold a whole Pod template).
const maxInputLen = 80

// condition returns the rule's when condition as evaluated for obj, which
// it selects (holds) or fails only by it; nil when it has none.
func (c *Compiled) condition(obj metav1.Object, h home, holds bool) *Condition {
	if c.when == nil {
		return nil
	}
	return &Condition{Expression: c.When, Holds: holds, Inputs: celInputs(c.when, obj, h)}
}

// source says how the rule computes the value of the key of kind, and
// what that reads of obj (whose namespace is h): "" for a literal.
func (c *Compiled) source(kind, key string, obj metav1.Object, h home) (string, []Input) {
	m, cels := c.Of(kind), c.kind(kind).cel
	from, fromNS := m.From, m.FromNamespace
	if e, ok := cels[key]; ok {
		return fmt.Sprintf("cel %q", e.Source), celInputs(e, obj, h)
	}
	if tmpl, ok := from[key]; ok {
		return fmt.Sprintf("jsonPath %q", tmpl), nil
	}
	if k, ok := fromNS[key]; ok {
		return "fromNamespace " + k.String(), namespaceInput(k, h)
	}
	return "", nil
}

// celInputs returns the fields e reads of obj and of its namespace, each
// once, sorted; none when they cannot be read.
func celInputs(e *celexpr.Expr, obj metav1.Object, h home) []Input {
	object, ns, why := celexpr.Input(obj, h.isNamespace, h.look, e)
	if why != "" {
		return nil
	}
	var out []Input
	add := func(root string, content map[string]any, paths [][]string) {
		for _, p := range paths {
			if len(p) == 0 {
				continue // the whole object: no one field to show
			}
			out = append(out, Input{Field: fieldName(root, p), Value: valueAt(content, p)})
		}
	}
	add(celexpr.Object, object, e.Reads)
	if ns != nil {
		add(celexpr.NamespaceObject, ns, e.NamespaceReads)
	}
	slices.SortFunc(out, func(a, b Input) int { return cmp.Compare(a.Field, b.Field) })
	return slices.CompactFunc(out, func(a, b Input) bool { return a.Field == b.Field })
}

// namespaceInput returns the key of the namespace that a fromNamespace
// value reads, and its value; none when there is no namespace to read.
func namespaceInput(k rulefile.NamespaceKey, h home) []Input {
	if h.obj == nil {
		return nil
	}
	root, m := celexpr.NamespaceObject, h.obj.GetAnnotations()
	if h.isNamespace {
		root = celexpr.Object
	}
	field := "annotations"
	if k.Kind == rulefile.LabelKind {
		field, m = "labels", h.obj.GetLabels()
	}
	in := Input{Field: fieldName(root, []string{"metadata", field, k.Key})}
	if v, ok := m[k.Key]; ok {
		in.Value = ptrTo(strconv.Quote(v))
	}
	return []Input{in}
}

// celIdent matches a field name CEL can select with a dot.
var celIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// fieldName writes path under root as CEL would select it.
func fieldName(root string, path []string) string {
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

// valueAt returns the value at path in content as JSON, cut to
// maxInputLen; nil when absent.
func valueAt(content map[string]any, path []string) *string {
	v, missingAt, ok := celexpr.ContentValue(content, path)
	if !ok || missingAt >= 0 {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ptrTo(fmt.Sprintf("%v", v))
	}
	s := string(b)
	if len(s) > maxInputLen {
		s = s[:maxInputLen] + "…"
	}
	return &s
}

func ptrTo(s string) *string { return &s }
