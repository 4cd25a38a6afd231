package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// WorkloadLabels are the labels of Pods that Kubernetes' workload
// controllers select or version them by: a Deployment's ReplicaSets
// select their Pods by pod-template-hash, a Job by its controller-uid,
// and StatefulSets and DaemonSets tell a Pod's revision by
// controller-revision-hash. Writing one would orphan a Pod, or have it
// replaced: no rule on Pods may set or remove one. (Other labels an
// owner selects by are known only from the owner: the controller leaves
// those unchanged where it reads owners.)
var WorkloadLabels = []string{"pod-template-hash", "controller-uid", "batch.kubernetes.io/controller-uid", "controller-revision-hash"}

// workloadLabels reports each of WorkloadLabels that r, the rule at
// index i, sets or removes, when it names pods.
func workloadLabels(r *rulefile.Rule, i int) []rulefile.FieldError {
	if !slices.ContainsFunc(r.Resources, func(name string) bool { return slices.Contains(source.Node.Names, strings.ToLower(name)) }) {
		return nil
	}
	var out []rulefile.FieldError
	for _, k := range WorkloadLabels {
		field := rulefile.FieldPath(fmt.Sprintf("rules[%d].labels", i), k)
		if _, set := labelWritesOf(r).keys[k]; !set {
			if !slices.Contains(r.Labels.Remove, k) || r.Audit() {
				continue
			}
			field = fmt.Sprintf("rules[%d].removeLabels", i)
		}
		out = append(out, rulefile.FieldError{Field: field, Message: fmt.Sprintf(
			"is the label %q of Pods, which their workload controller selects or versions them by: writing it would orphan a Pod or have it replaced", k)})
	}
	return out
}
