package value

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// FromNamespace reads the values of from in home, the object's namespace
// (the object itself for a Namespace; nil when there is none, or it is not
// known, why says). A key home does not carry, or whose value is not
// valid, sets nothing; it is returned in missing.
func FromNamespace(from map[string]spec.NamespaceKey, home metav1.Object, why string, valid func(string) []string) (map[string]string, []Missing) {
	if len(from) == 0 {
		return nil, nil
	}
	var out map[string]string
	var miss []Missing
	for _, k := range slices.Sorted(maps.Keys(from)) {
		src := from[k]
		if home == nil {
			miss = append(miss, Missing{Key: k, Why: fmt.Sprintf("fromNamespace %s: %s", src, why), Reason: ReasonSourceMissing, Value: ""})
			continue
		}
		m := home.GetLabels()
		if src.Kind == spec.AnnotationKind {
			m = home.GetAnnotations()
		}
		v, ok := m[src.Key]
		if !ok {
			miss = append(miss, Missing{Key: k, Why: fmt.Sprintf("fromNamespace: namespace %q has no %s", home.GetName(), src), Reason: ReasonSourceMissing, Value: ""})
			continue
		}
		if msgs := valid(v); len(msgs) > 0 {
			miss = append(miss, Missing{Key: k, Why: fmt.Sprintf("fromNamespace: the value of %s (%d bytes) is not valid: %v", src, len(v), msgs), Reason: ReasonInvalid, Value: v})
			continue
		}
		out = spec.Put(out, k, v)
	}
	return out, miss
}
