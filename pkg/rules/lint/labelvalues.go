package lint

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/client-go/util/jsonpath"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/labelvalue"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// InvalidLabelValues returns a warning for each label of the rules of f
// whose computed value may be no valid label value, and which gives no
// ifInvalid to make it one: where it is not, the label is not set. A
// value read with jsonPath or CEL may be anything, and an annotation of
// another object, or a ConfigMap's data key, any string; a label copied from another label, by
// fromNamespace, fromNode, or a jsonPath or CEL that only reads one
// ({.metadata.labels.team}, namespaceObject.metadata.labels.team), is
// always valid, and is not warned of. Each value form of a default chain
// is looked at: the first that may yield no valid value is said.
func InvalidLabelValues(f *rulefile.File) []rulefile.FieldError {
	var out []rulefile.FieldError
	for i := range f.Rules {
		r := &f.Rules[i]
		how := map[string]string{} // key → how its value is read
		for depth, l := range r.Labels.Levels() {
			for k, h := range labelHows(l) {
				if depth > 0 {
					h = "defaulted to a value " + h
				}
				if _, seen := how[k]; !seen {
					how[k] = h
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(how)) {
			field := fmt.Sprintf("rules[%d].labels.%s", i, k)
			out = append(out, rulefile.FieldError{Line: f.Line(field), Field: field, Message: fmt.Sprintf(
				"rule %q: label %q is %s, which may yield no valid label value (at most 63 letters, digits, '-', '_' and '.'), "+
					"and the label is then not set; add ifInvalid: %s to make such a value valid",
				r.Name, k, how[k], labelvalue.ModesText)})
		}
	}
	return out
}

// labelHows returns how each label of m, one level of a default chain,
// is read when that may yield no valid label value and m gives no
// ifInvalid for it, by key.
func labelHows(m *rulefile.Metadata) map[string]string {
	how := map[string]string{}
	for k, tmpl := range m.From {
		if !copiesLabel(tmpl) {
			how[k] = fmt.Sprintf("read with jsonPath '%s'", tmpl)
		}
	}
	for k, src := range m.CEL {
		if !celexpr.CopiesLabel(src) {
			how[k] = fmt.Sprintf("computed by CEL %q", src)
		}
	}
	for k, nk := range m.FromNamespace {
		if nk.Kind == rulefile.AnnotationKind {
			how[k] = fmt.Sprintf("copied from the annotation %q of %s", nk.Key, source.Namespace.What)
		}
	}
	for k, rk := range m.FromRelated {
		if rk.Kind != rulefile.LabelKind { // an annotation, or a ConfigMap's data key
			how[k] = fmt.Sprintf("copied from the %s %q of %s", rk.Kind, rk.Key, rk.Source.What)
		}
	}
	for k := range m.IfInvalid { // each form's own ifInvalid makes its value valid
		delete(how, k)
	}
	return how
}

// copiesLabel reports whether tmpl, a JSONPath template, only reads one
// label of the object: {.metadata.labels.team}.
func copiesLabel(tmpl string) bool {
	p, err := jsonpath.Parse("value", tmpl)
	if err != nil || len(p.Root.Nodes) != 1 {
		return false
	}
	list, ok := p.Root.Nodes[0].(*jsonpath.ListNode)
	if !ok || len(list.Nodes) != 3 {
		return false
	}
	var path []string
	for _, n := range list.Nodes {
		field, ok := n.(*jsonpath.FieldNode)
		if !ok {
			return false
		}
		path = append(path, field.Value)
	}
	return path[0] == "metadata" && path[1] == "labels"
}
