package rules

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/verdict"
)

// condition returns the rule's when condition as evaluated for obj, which
// it selects (holds) or fails only by it; nil when it has none.
func (c *Compiled) condition(obj metav1.Object, h home, holds bool) *verdict.Condition {
	if c.sel.When == nil {
		return nil
	}
	return &verdict.Condition{Expression: c.When, Holds: holds, Inputs: verdict.CELInputs(c.sel.When, obj, h.isNamespace, h.look)}
}

// source says how the rule computes the value of the key of kind, and
// what that reads of obj (whose namespace is h): "" for a literal.
func (c *Compiled) source(kind, key string, obj metav1.Object, h home) (string, []verdict.Input) {
	m, cels := c.Of(kind), c.kind(kind).cel
	from, fromNS := m.From, m.FromNamespace
	if e, ok := cels[key]; ok {
		return fmt.Sprintf("cel %q", e.Source), verdict.CELInputs(e, obj, h.isNamespace, h.look)
	}
	if tmpl, ok := from[key]; ok {
		return fmt.Sprintf("jsonPath %q", tmpl), nil
	}
	if k, ok := fromNS[key]; ok {
		return "fromNamespace " + k.String(), namespaceInput(k, h)
	}
	return "", nil
}

// namespaceInput returns the key of the namespace that a fromNamespace
// value reads, and its value; none when there is no namespace to read.
func namespaceInput(k rulefile.NamespaceKey, h home) []verdict.Input {
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
	in := verdict.Input{Field: verdict.FieldName(root, []string{"metadata", field, k.Key})}
	if v, ok := m[k.Key]; ok {
		in.Value = verdict.PtrTo(strconv.Quote(v))
	}
	return []verdict.Input{in}
}
