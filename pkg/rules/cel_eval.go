package rules

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// compileCELs compiles the cel values of a rule, by key.
func compileCELs(from map[string]string) (map[string]*celExpr, error) {
	if len(from) == 0 {
		return nil, nil
	}
	out := make(map[string]*celExpr, len(from))
	for k, src := range from {
		e, err := compileCEL(src, stringType)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = e
	}
	return out, nil
}

// celExprs returns the rule's CEL expressions: its when condition and
// its cel values.
func (c *Compiled) celExprs() []*celExpr {
	if c.when == nil {
		return c.values
	}
	return append([]*celExpr{c.when}, c.values...)
}

// sortedExprs returns the expressions of the maps, each by key.
func sortedExprs(ms ...map[string]*celExpr) []*celExpr {
	var out []*celExpr
	for _, m := range ms {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, m[k])
		}
	}
	return out
}

// readsNamespaceObject reports whether a CEL expression of the rule reads
// namespaceObject.
func (c *Compiled) readsNamespaceObject() bool {
	return slices.ContainsFunc(c.celExprs(), func(e *celExpr) bool { return len(e.namespaceReads) > 0 })
}

// WhenReadsNamespace reports whether the rule's when condition reads
// namespaceObject.
func (c *Compiled) WhenReadsNamespace() bool {
	return c.when != nil && len(c.when.namespaceReads) > 0
}

// celInput returns what exprs, CEL expressions of a rule, read of obj: its
// content (its metadata, from a metadata cache, when they read no more),
// and the metadata of its Namespace (nil for a cluster-scoped
// object or a Namespace, as admission gives them); or why they cannot be
// read.
func celInput(obj metav1.Object, isNamespace bool, namespaces source.Lookup, exprs ...*celExpr) (object, namespace map[string]any, why string) {
	switch u, ok := obj.(source.Content); {
	case ok:
		object = u.UnstructuredContent()
	case readsMetadataOnly(exprs):
		object = metadataContent(obj, metadataFields(exprs))
	default:
		return nil, nil, fmt.Sprintf("the cache holds only the metadata of %T; CEL cannot read the object", obj)
	}
	needsNamespace := slices.ContainsFunc(exprs, func(e *celExpr) bool { return len(e.namespaceReads) > 0 })
	ns := obj.GetNamespace()
	if !needsNamespace || isNamespace || ns == "" {
		return object, nil, ""
	}
	m, ok := source.NamespaceOf(namespaces, ns)
	if !ok {
		return nil, nil, fmt.Sprintf("namespace %q is not known", ns)
	}
	md := map[string]any{"name": m.GetName()}
	if l := m.GetLabels(); l != nil {
		md["labels"] = l
	}
	if a := m.GetAnnotations(); a != nil {
		md["annotations"] = a
	}
	return object, map[string]any{"metadata": md}, ""
}

// whenFails returns why the rule's when condition does not hold for obj,
// or "" when it does (or the rule has none). An error, or a result other
// than true, leaves the object unselected.
func (c *Compiled) whenFails(obj metav1.Object, isNamespace bool, namespaces source.Lookup) string {
	if c.when == nil {
		return ""
	}
	v, err := c.when.evalOn(obj, isNamespace, namespaces)
	if err != nil {
		return fmt.Sprintf("when %q: %v", c.When, err)
	}
	if b, ok := v.(bool); !ok || !b {
		return fmt.Sprintf("when %q is %v", c.When, v)
	}
	return ""
}

// celValues evaluates the rule's cel values from against obj, or takes
// their outcomes from h. A value that is not a string, an error, or a
// result valid rejects sets nothing; the reason is returned in missing.
func celValues(from map[string]*celExpr, obj metav1.Object, h home, valid func(string) []string) (map[string]string, []missing) {
	if len(from) == 0 {
		return nil, nil
	}
	var out map[string]string
	var problems []missing
	for _, k := range slices.Sorted(maps.Keys(from)) {
		v, err := h.outcome(from[k], obj)
		if err != nil {
			problems = append(problems, missing{k, fmt.Sprintf("cel: %v", err), ReasonError})
			continue
		}
		s, ok := v.(string)
		if !ok {
			problems = append(problems, missing{k, fmt.Sprintf("cel: yields a %T, not a string", v), ReasonError})
			continue
		}
		if msgs := valid(s); len(msgs) > 0 {
			problems = append(problems, missing{k, fmt.Sprintf("cel: the value (%d bytes) is not valid: %v", len(s), msgs), ReasonInvalid})
			continue
		}
		out = put(out, k, s)
	}
	return out, problems
}

// outcome returns what e yields on obj: its outcome in h.evaluated, or
// else its value now.
func (h home) outcome(e *celExpr, obj metav1.Object) (any, error) {
	for _, o := range h.evaluated {
		if o.expr == e {
			return o.value, o.err
		}
	}
	return e.evalOn(obj, h.isNamespace, h.look)
}
