package value

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// RecordedCopies returns the keys of kind that m's recorded key sets
// (once: true) hold on obj: those copied now, and those obj carries that
// a recorded set copies, which stay when their source changes or loses
// them. Nil when no set of m is recorded. A key the rule sets otherwise,
// or removes, is not copied, so not recorded either.
func RecordedCopies(m *spec.Metadata, obj metav1.Object, kind string, copied map[string]string) map[string]bool {
	if !slices.ContainsFunc(m.Copy, func(s spec.KeySet) bool { return s.Once }) {
		return nil
	}
	have := obj.GetLabels()
	if kind == spec.AnnotationKind {
		have = obj.GetAnnotations()
	}
	own := m.Computed()
	for k := range m.Values {
		own[k] = ""
	}
	for _, k := range m.Remove {
		own[k] = ""
	}
	var out map[string]bool
	for i := range m.Copy {
		set := &m.Copy[i]
		for _, keys := range []map[string]string{copied, have} {
			for k := range keys {
				if _, taken := own[k]; set.Once && set.Matches(k) && !taken {
					out = spec.Put(out, k, true)
				}
			}
		}
	}
	return out
}
