package rulefile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// podTemplatesField asks that a Pod rule's keys be set in the pod
// templates of the workloads created too.
const podTemplatesField = "podTemplates"

// podTemplates checks r, a rule found at path that asks for podTemplates:
// it must be a rule for Pods alone, in enforce mode, that selects Pods by
// what a template has of them: its namespace, its labels, its spec (a
// when condition reads the template as the Pod), not its name (a
// workload's Pods get theirs when created).
func (d *decoder) podTemplates(n *yaml.Node, path string, r *Rule) {
	p := FieldPath(path, podTemplatesField)
	refuse := func(format string, args ...any) {
		d.Errs = append(d.Errs, FieldError{Line: cmp.Or(d.Lines[p], n.Line), Field: p, Message: fmt.Sprintf(format, args...)})
	}
	pods := source.Node.Names // the names of pods, which a Node's Pods are
	for j, name := range r.Resources {
		if !slices.Contains(pods, strings.ToLower(name)) {
			refuse("pod templates are for a rule on pods, but the rule also names %q (resources[%d]): give it a rule of its own", name, j)
		}
	}
	switch {
	case r.Audit():
		refuse("audit mode writes nothing, in pod templates neither")
	case len(r.Names) > 0:
		refuse("a template has no Pod name (a workload's Pods are named when created), so names cannot select it: select by selector or namespace")
	}
}
