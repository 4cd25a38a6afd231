package reconcile

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Prune returns the target of r once no rule names it: it has no rule, so
// that Decide on it deletes every key the deciding manager owns — unless
// the object opts out — and touches nothing else. Pruning reads no values
// from objects: a metadata cache is enough.
func Prune(r source.Resource) *rules.Target { return &rules.Target{Resource: r} }

// ToPrune returns, in the order of recorded, the recorded resources that
// no target of set names at any version: the resources whose keys the
// field manager set must be deleted. It is the one decision of what to
// prune, for run, once and diff.
func ToPrune(recorded []schema.GroupResource, set *rules.Set) []schema.GroupResource {
	var out []schema.GroupResource
	for _, gr := range recorded {
		if !set.Names(gr) {
			out = append(out, gr)
		}
	}
	return out
}
