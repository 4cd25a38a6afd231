package controller

import (
	_ "embed"
	"fmt"
	goruntime "runtime"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
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
	{"when-metadata", "rules:\n- {name: r, resources: [deployments], when: \"object.metadata.labels['tier'] == 'frontend'\", labels: {size: big}}\n"},
	{"cel", "rules:\n- {name: r, resources: [deployments], labels: {size: {cel: \"object.spec.replicas > 2 ? 'big' : 'small'\"}}}\n"},
	{"when+cel", "rules:\n- {name: r, resources: [deployments], when: \"object.metadata.labels['tier'] == 'frontend'\", " +
		"labels: {size: {cel: \"object.spec.replicas > 2 ? 'big' : 'small'\"}}}\n"},
	// A literal rule that selects by label: evaluated per object like the
	// rules with CEL, where a rule that applies to every object is
	// evaluated once, when the rules are compiled.
	{"selector", "rules:\n- {name: r, resources: [deployments], selector: tier=frontend, labels: {size: big}}\n"},
}

// BenchmarkSyncDecide measures what sync decides for one Deployment, the
// per-sync cost of the rules: a literal rule, the same with a when
// condition (on a field of the spec, or on a label, which a metadata cache
// keeps), a value computed in CEL, and both; and a literal rule with a
// label selector, which like them is evaluated per object. Each decides on the
// Deployment as its informer caches it — the metadata cache's projection
// for the literal rule, the object cache's projected fields for the
// others — and must find nothing to change. (Target: when and cel ≤ 2×
// the literal.)
func BenchmarkSyncDecide(b *testing.B) {
	for _, bc := range syncDecideCases {
		b.Run(bc.name, func(b *testing.B) {
			target := rulestest.Compile(b, bc.rules, rulestest.Deployments).Targets[rulestest.Deployments.GVR]
			obj := cachedDeployment(b, target)
			ns := source.Namespaces(func(name string) (metav1.Object, bool) { return &metav1.ObjectMeta{Name: name}, true })
			d, err := reconcile.Decide(target, obj, ns, reconcile.FieldManager)
			if err != nil || !d.Change.Empty() || d.Evaluation.Desired.Labels["size"] != "big" {
				b.Fatalf("Decide() = %+v, %v; want size: big, nothing to change", d, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reconcile.Decide(target, obj, ns, reconcile.FieldManager); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// unseenCases are rules BenchmarkSyncDecideUnseen compares on objects
// that each give what the rules read a value no other object gives: a
// when condition and a cel value on spec.replicas, whose outcome every
// object shares, and a cel value of the object's own name, whose outcome
// none does. size gives the label each object carries, what the rule
// wants of it.
var unseenCases = []struct {
	name, rules string
	size        func(name string) string
}{
	{"literal", syncDecideCases[0].rules, func(string) string { return "big" }},
	{"when", syncDecideCases[1].rules, func(string) string { return "big" }},
	{"cel", syncDecideCases[3].rules, func(string) string { return "big" }},
	{"cel-of-name", "rules:\n- {name: r, resources: [deployments], labels: {size: {cel: 'object.metadata.name'}}}\n",
		func(name string) string { return name }},
}

// BenchmarkSyncDecideUnseen measures what sync decides when what the CEL
// expressions read is new every time, which the memos of their results
// and of evaluations cannot answer: each sync is on another of 10,000
// Deployments of deploymentJSON (more than the memos keep), each with its
// own name and spec.replicas, cached as their informer caches them. The
// worst case of BenchmarkSyncDecide.
func BenchmarkSyncDecideUnseen(b *testing.B) {
	const n = 10000
	for _, bc := range unseenCases {
		b.Run(bc.name, func(b *testing.B) {
			target := rulestest.Compile(b, bc.rules, rulestest.Deployments).Targets[rulestest.Deployments.GVR]
			transform := cacheTransform(target)
			ns := source.Namespaces(func(name string) (metav1.Object, bool) { return &metav1.ObjectMeta{Name: name}, true })
			objs := make([]patch.Object, n)
			for i := range objs {
				u := numberedDeployment(b, i, false).(*unstructured.Unstructured)
				labels := u.GetLabels()
				labels["size"] = bc.size(u.GetName())
				u.SetLabels(labels)
				if err := unstructured.SetNestedField(u.Object, int64(3+i), "spec", "replicas"); err != nil {
					b.Fatal(err)
				}
				var in any = u
				if !target.Projection().Whole {
					in = fixture.Partial(u)
				}
				obj, err := transform(in)
				if err != nil {
					b.Fatal(err)
				}
				objs[i] = obj.(patch.Object)
				if d, err := reconcile.Decide(target, objs[i], ns, reconcile.FieldManager); err != nil || !d.Change.Empty() {
					b.Fatalf("Decide(%s) = %+v, %v; want nothing to change", u.GetName(), d, err)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := reconcile.Decide(target, objs[i%n], ns, reconcile.FieldManager); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// TestDecideOnCachedDeployment checks that the rules of
// BenchmarkSyncDecide decide on the Deployment as its informer caches it
// what they decide on the whole Deployment: size: big, nothing to change.
func TestDecideOnCachedDeployment(t *testing.T) {
	ns := source.Namespaces(func(name string) (metav1.Object, bool) { return &metav1.ObjectMeta{Name: name}, true })
	for _, tc := range syncDecideCases {
		t.Run(tc.name, func(t *testing.T) {
			target := rulestest.Compile(t, tc.rules, rulestest.Deployments).Targets[rulestest.Deployments.GVR]
			for what, obj := range map[string]patch.Object{"cached": cachedDeployment(t, target), "whole": wholeDeployment(t)} {
				d, err := reconcile.Decide(target, obj, ns, reconcile.FieldManager)
				if err != nil || !d.Change.Empty() || d.Evaluation.Desired.Labels["size"] != "big" || len(d.Evaluation.Problems) > 0 {
					t.Errorf("Decide() on the %s Deployment = %+v, %v; want size: big, nothing to change", what, d.Evaluation, err)
				}
			}
		})
	}
}

// wholeDeployment returns the Deployment of deploymentJSON, decoded as
// the dynamic client decodes it.
func wholeDeployment(t testing.TB) *unstructured.Unstructured {
	t.Helper()
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(deploymentJSON, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*unstructured.Unstructured)
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
		obj, err = objcache.ObjectTransform(reconcile.FieldManager, t.Resource, &keep, objcache.NewInterner())(u)
	} else {
		obj, err = objcache.MetadataTransform(reconcile.FieldManager, t.Resource, &keep, objcache.NewInterner())(fixture.Partial(u))
	}
	if err != nil {
		b.Fatal(err)
	}
	return obj.(patch.Object)
}

// BenchmarkCachedDeploymentHeap reports the live heap per cached
// Deployment of deploymentJSON (10,000 of them, each with its own name,
// UID and resourceVersion) as the informer caches it for a literal rule,
// for a when condition on a label (a metadata cache), on a field of the
// spec (the object cache, keeping the fields read), and for a JSONPath
// value (whole objects).
func BenchmarkCachedDeploymentHeap(b *testing.B) {
	const n = 10000
	for _, bc := range []struct{ name, rules string }{
		syncDecideCases[0], syncDecideCases[2], syncDecideCases[1],
		{"jsonPath", "rules:\n- {name: r, resources: [deployments], labels: {size: {jsonPath: '{.metadata.labels.size}'}}}\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			target := rulestest.Compile(b, bc.rules, rulestest.Deployments).Targets[rulestest.Deployments.GVR]
			for b.Loop() {
				transform := cacheTransform(target)
				store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
				before := fixture.LiveHeap()
				for i := range n {
					obj, err := transform(numberedDeployment(b, i, !target.Projection().Whole))
					if err == nil {
						err = store.Add(obj)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(fixture.LiveHeap()-before)/n, "B/object")
				goruntime.KeepAlive(store)
			}
		})
	}
}

// cacheTransform returns the transform of the informer of t's resource.
func cacheTransform(t *rules.Target) cache.TransformFunc {
	keep := t.Projection()
	if keep.Whole {
		return objcache.ObjectTransform(reconcile.FieldManager, t.Resource, &keep, objcache.NewInterner())
	}
	return objcache.MetadataTransform(reconcile.FieldManager, t.Resource, &keep, objcache.NewInterner())
}

// numberedDeployment returns the Deployment of deploymentJSON, decoded as
// the dynamic client decodes it, with a name, UID and resourceVersion of
// its own; as the metadata client decodes it when metadataOnly is set.
func numberedDeployment(b *testing.B, i int, metadataOnly bool) any {
	u := wholeDeployment(b)
	u.SetName(fmt.Sprintf("checkout-%d", i))
	u.SetUID(types.UID(fmt.Sprintf("5c0f3e0a-4be4-4c1f-9a38-%012d", i)))
	u.SetResourceVersion(strconv.Itoa(48213377 + i))
	if metadataOnly {
		return fixture.Partial(u)
	}
	return u
}
