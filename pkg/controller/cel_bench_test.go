package controller

import (
	_ "embed"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// deploymentJSON is a Deployment as a cluster's API server serves it:
// eleven labels, a kubectl last-applied-configuration of 4 KB, Helm's
// annotations, two containers with probes, env and resources, a status,
// and the managedFields of kubectl, Helm, the Deployment controller and
// kube-annotator, which owns its label size: big.
//
//go:embed testdata/deployment.json
var deploymentJSON []byte

// syncDecideCases are the rules BenchmarkSyncDecide compares: each sets
// size: big on the Deployment, which carries it already, as every object
// does in steady state.
var syncDecideCases = []struct{ name, rules string }{
	{"literal", "rules:\n- {name: r, resources: [deployments], labels: {size: big}}\n"},
	{"when", "rules:\n- {name: r, resources: [deployments], when: 'object.spec.replicas > 2', labels: {size: big}}\n"},
	{"cel", "rules:\n- {name: r, resources: [deployments], labels: {size: {cel: \"object.spec.replicas > 2 ? 'big' : 'small'\"}}}\n"},
	{"when+cel", "rules:\n- {name: r, resources: [deployments], when: \"object.metadata.labels['tier'] == 'frontend'\", " +
		"labels: {size: {cel: \"object.spec.replicas > 2 ? 'big' : 'small'\"}}}\n"},
}

// BenchmarkSyncDecide measures what sync decides for one Deployment, the
// per-sync cost of the rules: a literal rule, the same with a when
// condition, a value computed in CEL, and both. Each decides on the
// Deployment as its informer caches it — the metadata cache's projection
// for the literal rule, the object cache's projected fields for the
// others — and must find nothing to change. (Target: when and cel ≤ 2×
// the literal.)
func BenchmarkSyncDecide(b *testing.B) {
	for _, bc := range syncDecideCases {
		b.Run(bc.name, func(b *testing.B) {
			target := rulestest.Compile(b, bc.rules, rulestest.Deployments).Targets[rulestest.Deployments.GVR]
			obj := cachedDeployment(b, target)
			ns := func(name string) (metav1.Object, bool) { return &metav1.ObjectMeta{Name: name}, true }
			ignored := func(string) bool { return false }
			d, err := reconcile.Decide(target, obj, ns, ignored, reconcile.FieldManager)
			if err != nil || !d.Change.Empty() || d.Evaluation.Desired.Labels["size"] != "big" {
				b.Fatalf("Decide() = %+v, %v; want size: big, nothing to change", d, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reconcile.Decide(target, obj, ns, ignored, reconcile.FieldManager); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDecideOnCachedDeployment checks that the rules of
// BenchmarkSyncDecide decide on the Deployment as its informer caches it
// what they decide on the whole Deployment: size: big, nothing to change.
func TestDecideOnCachedDeployment(t *testing.T) {
	ns := func(name string) (metav1.Object, bool) { return &metav1.ObjectMeta{Name: name}, true }
	for _, tc := range syncDecideCases {
		t.Run(tc.name, func(t *testing.T) {
			target := rulestest.Compile(t, tc.rules, rulestest.Deployments).Targets[rulestest.Deployments.GVR]
			for what, obj := range map[string]patch.Object{"cached": cachedDeployment(t, target), "whole": wholeDeployment(t)} {
				d, err := reconcile.Decide(target, obj, ns, func(string) bool { return false }, reconcile.FieldManager)
				if err != nil || !d.Change.Empty() || d.Evaluation.Desired.Labels["size"] != "big" || len(d.Evaluation.Problems) > 0 {
					t.Errorf("Decide() on the %s Deployment = %+v, %v; want size: big, nothing to change", what, d.Evaluation, err)
				}
			}
		})
	}
}

// wholeDeployment returns the Deployment of deploymentJSON.
func wholeDeployment(t testing.TB) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(deploymentJSON, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// cachedDeployment returns the Deployment of deploymentJSON as the
// informer of t's resource keeps it in its cache.
func cachedDeployment(b testing.TB, t *rules.Target) patch.Object {
	b.Helper()
	u := wholeDeployment(b)
	keep := t.Projection()
	var obj any
	var err error
	if keep.Whole {
		obj, err = objcache.ObjectTransform(reconcile.FieldManager, t.Resource, keep.Fields, objcache.NewInterner())(u)
	} else {
		obj, err = objcache.MetadataTransform(reconcile.FieldManager, t.Resource, &keep, objcache.NewInterner())(fixture.Partial(u))
	}
	if err != nil {
		b.Fatal(err)
	}
	return obj.(patch.Object)
}
