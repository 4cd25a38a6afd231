package controller

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// The owner chain of BenchmarkOwnerChain: a cluster's shape of
// Deployments, each with its history of ReplicaSets and the Pods of the
// current one.
const (
	chainDeployments = 1000
	chainHistory     = 10 // ReplicaSets per Deployment, the last current
	chainPods        = 10 // Pods of each current ReplicaSet
)

// ownerChainCases are the rules BenchmarkOwnerChain compares: each sets
// team: payments on every Pod, which carries it already.
var ownerChainCases = []struct{ name, rules string }{
	{"literal", "rules:\n- {name: r, resources: [pods], labels: {team: payments}}\n"},
	{"fromOwner", "rules:\n- {name: r, resources: [pods], labels: {team: {fromOwner: {label: team}}}}\n"},
}

// BenchmarkOwnerChain measures what reading a Pod's value from its
// Deployment, through its ReplicaSet, costs against a literal rule:
// 1,000 Deployments, each with 10 ReplicaSets in its history and 10 Pods
// of the current one — 10,000 Pods, 11,000 owners, labelled and annotated
// as Helm and kubectl leave them — every Pod already carrying what the
// rule wants. For each rule a controller starts and decides every Pod;
// the heap it then holds is compared (heap-B/owner: what reading owners adds, per owner cached, the
// Pods' controller references included), and a sub-benchmark times one
// sync of a Pod, round robin, with the per-rule gauges it keeps (ns/op,
// allocs/op). Run it with -bench OwnerChain -benchtime 20000x.
func BenchmarkOwnerChain(b *testing.B) {
	client := newClient(ownerChain()...)
	keys := chainPodKeys()
	benchRelated(b, client, ownerChainCases, compileOwners, keys, "pod", "owner", chainDeployments*(1+chainHistory))
}

// benchRelated runs, for each case, a controller with its rules on
// client until it has decided every object of keys, and measures the heap
// it then holds: per object (heap-B/<object>) and, against the first
// case's, per related object cached (heap-B/<related>), related being how
// many are. A sub-benchmark per case times one sync of an object, round
// robin, with the per-rule gauges it keeps.
func benchRelated(b *testing.B, client *dynamicfake.FakeDynamicClient, cases []struct{ name, rules string },
	compile func(testing.TB, string) *rules.Set, keys []Key, object, related string, relatedObjects int) {
	heap := map[string]uint64{}
	for _, bc := range cases {
		ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background().V(1)))
		before := fixture.LiveHeap()
		c, stopped := decided(b, ctx, client, compile(b, bc.rules), keys)
		heap[bc.name] = fixture.LiveHeap() - before
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := c.syncHandler(ctx, keys[i%len(keys)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(heap[bc.name])/float64(len(keys)), "heap-B/"+object)
			if first := cases[0].name; bc.name != first {
				b.ReportMetric((float64(heap[bc.name])-float64(heap[first]))/float64(relatedObjects), "heap-B/"+related)
			}
		})
		cancel()
		<-stopped // the next heap is measured without this controller's
	}
}

// decided runs a controller with set on client until it has decided
// every object of keys, and returns it with a channel closed once it
// stopped, when ctx ends. Every object must carry what set wants already.
func decided(b *testing.B, ctx context.Context, client *dynamicfake.FakeDynamicClient, set *rules.Set, keys []Key) (*Controller, <-chan struct{}) {
	b.Helper()
	m := metrics.New()
	c := NewController(client, metadataOf(client), Options{Workers: 8, Metrics: m})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := c.Run(ctx); err != nil {
			b.Error(err)
		}
	}()
	c.SetRules(ctx, set)
	testutil.WaitFor(b, 5*time.Minute, "every object decided", func() bool {
		decided, queued := m.Activity.Read()
		return decided >= uint64(len(keys)) && queued == 0 && c.HasSynced()
	})
	if got := len(patches(client)); got != 0 {
		b.Fatalf("%d writes, want none: every object carries what the rules want", got)
	}
	return c, stopped
}

// chainPodKeys returns the keys of the owner chain's Pods.
func chainPodKeys() []Key {
	keys := make([]Key, 0, chainDeployments*chainPods)
	for d := range chainDeployments {
		for p := range chainPods {
			keys = append(keys, Key{GVR: pods, Namespace: "shop", Name: fmt.Sprintf("web-%04d-%d-%d", d, chainHistory-1, p)})
		}
	}
	return keys
}

// ownerChain returns the Deployments, ReplicaSets and Pods of the chain,
// in namespace shop, labelled and annotated as Helm and kubectl leave
// them; each Pod carries team: payments, set by this controller.
func ownerChain() []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	for d := range chainDeployments {
		app := fmt.Sprintf("web-%04d", d)
		labels := helmLabels(app, app)
		dep := owned("apps/v1", "Deployment", app, labels, nil)
		dep.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": fmt.Sprint(chainHistory),
			"meta.helm.sh/release-name": app, "meta.helm.sh/release-namespace": "shop",
			"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 3000)})
		_ = unstructured.SetNestedStringMap(dep.Object, map[string]string{"app": app}, "spec", "selector", "matchLabels")
		objs = append(objs, dep)
		for r := range chainHistory {
			hash := fmt.Sprintf("%d", r)
			rsLabels := maps.Clone(labels)
			rsLabels["pod-template-hash"] = hash
			rs := owned("apps/v1", "ReplicaSet", app+"-"+hash, rsLabels, dep)
			rs.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": fmt.Sprint(r + 1),
				"deployment.kubernetes.io/desired-replicas": fmt.Sprint(chainPods), "deployment.kubernetes.io/max-replicas": fmt.Sprint(chainPods + 3),
				"meta.helm.sh/release-name": app, "meta.helm.sh/release-namespace": "shop"})
			_ = unstructured.SetNestedStringMap(rs.Object, map[string]string{"app": app, "pod-template-hash": hash}, "spec", "selector", "matchLabels")
			objs = append(objs, rs)
			if r < chainHistory-1 {
				continue
			}
			for p := range chainPods {
				pod := owned("v1", "Pod", fmt.Sprintf("%s-%s-%d", app, hash, p), map[string]string{"app": app, "pod-template-hash": hash, "team": "payments"}, rs)
				pod.SetManagedFields([]metav1.ManagedFieldsEntry{fixture.OwnedFields(reconcile.FieldManager, nil, []string{"team"})})
				objs = append(objs, pod)
			}
		}
	}
	return objs
}
