package rules

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/rules/value"
)

// celExprs returns the rule's CEL expressions: its when condition and
// its cel values.
func (c *Compiled) celExprs() []*celexpr.Expr {
	if c.sel.When == nil {
		return c.values
	}
	return append([]*celexpr.Expr{c.sel.When}, c.values...)
}

// readsNamespaceObject reports whether a CEL expression of the rule reads
// namespaceObject.
func (c *Compiled) readsNamespaceObject() bool {
	return slices.ContainsFunc(c.celExprs(), func(e *celexpr.Expr) bool { return len(e.NamespaceReads) > 0 })
}

// ReadsRequest reports whether the cel value of key, of kind, reads the
// admission request, which the controller never knows.
func (c *Compiled) ReadsRequest(kind, key string) bool {
	e := c.kind(kind).cel[key]
	return e != nil && e.ReadsRequest
}

// ReadsOwnerObject reports whether src, one of the rule's CEL expressions
// (its when, a cel value, a key set), reads ownerObject, which only the
// controller knows.
func (c *Compiled) ReadsOwnerObject(src string) bool {
	return slices.ContainsFunc(c.celExprs(), func(e *celexpr.Expr) bool { return e.Source == src && len(e.OwnerReads) > 0 })
}

// WhenReadsNamespace reports whether the rule's when condition reads
// namespaceObject.
func (c *Compiled) WhenReadsNamespace() bool {
	return c.sel.When != nil && len(c.sel.When.NamespaceReads) > 0
}

// celValues evaluates the rule's cel values from against obj, or takes
// their outcomes from h. A value that is not a string, an error, or a
// result valid rejects sets nothing; the reason is returned in missing.
func celValues(from map[string]*celexpr.Expr, obj metav1.Object, h home, valid func(string) []string) (map[string]string, []value.Missing) {
	if len(from) == 0 {
		return nil, nil
	}
	var out map[string]string
	var problems []value.Missing
	for _, k := range slices.Sorted(maps.Keys(from)) {
		v, err := h.outcome(from[k], obj)
		if errors.Is(err, celexpr.ErrAdmissionOnly) {
			problems = append(problems, value.Missing{Key: k, Why: "cel: " + err.Error(), Reason: ReasonSourceMissing, AdmissionOnly: true})
			continue
		}
		if err != nil {
			problems = append(problems, value.Missing{Key: k, Why: fmt.Sprintf("cel: %v", err), Reason: ReasonError})
			continue
		}
		s, ok := v.(string)
		if !ok {
			problems = append(problems, value.Missing{Key: k, Why: fmt.Sprintf("cel: yields a %T, not a string", v), Reason: ReasonError})
			continue
		}
		if msgs := valid(s); len(msgs) > 0 {
			problems = append(problems, value.Missing{Key: k, Why: fmt.Sprintf("cel: the value (%d bytes) is not valid: %v", len(s), msgs), Reason: ReasonInvalid, Value: s})
			continue
		}
		out = spec.Put(out, k, s)
	}
	return out, problems
}

// outcome returns what e yields on obj: its outcome in h.evaluated, or
// else its value now.
func (h home) outcome(e *celexpr.Expr, obj metav1.Object) (any, error) {
	for _, o := range h.evaluated {
		if o.expr == e {
			return o.Value, o.Err
		}
	}
	return e.EvalOn(obj, h.isNamespace, h.look)
}

// ReadsFields reports whether the rule reads fields of objects that a
// metadata cache does not keep, so that the resource's cache must keep
// objects with their fields: a JSONPath value, which may read any field,
// a CEL expression that reads more than celexpr.MetadataOnly allows, or a
// value from a related object (fromNode), found through a field of the
// object (a Pod's spec.nodeName).
func (c *Compiled) ReadsFields() bool {
	return c.readsFields() || !celexpr.MetadataOnly(c.celExprs()) || len(c.relatedRefs()) > 0
}

// celKeys returns the label and annotation keys of objects that the
// rule's CEL expressions read by name.
func (c *Compiled) celKeys() (labelKeys, annotationKeys []string) {
	for _, e := range c.celExprs() {
		l, a := celexpr.MetadataKeys(e.Reads)
		labelKeys, annotationKeys = append(labelKeys, l...), append(annotationKeys, a...)
	}
	return labelKeys, annotationKeys
}
