package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// BenchmarkSyncDecide measures what sync decides for one Deployment, the
// per-sync cost of the rules: a literal rule, the same with a when
// condition, and a value computed in CEL. (Target: when and cel ≤ 2× the
// literal.)
func BenchmarkSyncDecide(b *testing.B) {
	for _, bc := range []struct{ name, rules string }{
		{"literal", "rules:\n- {name: r, resources: [deployments], labels: {size: big}}\n"},
		{"when", "rules:\n- {name: r, resources: [deployments], when: 'object.spec.replicas > 2', labels: {size: big}}\n"},
		{"cel", "rules:\n- {name: r, resources: [deployments], labels: {size: {cel: \"object.metadata.name + '-big'\"}}}\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			target := rulestest.Compile(b, bc.rules, rulestest.Deployments).Targets[rulestest.Deployments.GVR]
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "namespace": "team-a", "labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"replicas": int64(3)}}}
			ns := func(name string) (metav1.Object, bool) { return &metav1.ObjectMeta{Name: name}, true }
			ignored := func(string) bool { return false }
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reconcile.Decide(target, obj, ns, ignored, reconcile.FieldManager); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
