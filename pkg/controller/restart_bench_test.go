package controller

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/metadata"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// BenchmarkRestartConverged measures a restart on converged objects:
// realistic ConfigMaps (ten labels, four annotations, managedFields of
// two other managers and of this controller, which set annotation a), all
// carrying what the rule wants, listed from memory (no API server, no
// decoding). Each round runs, alternately, a controller that decides the
// initial list in its event handler and one that enqueues every object,
// until every object is synced; it reports each one's process CPU until
// then and the heap it holds once synced (with the objects' list, the
// same for both), per object, and their ratios. Run it with
// -bench RestartConverged -benchtime 3x.
func BenchmarkRestartConverged(b *testing.B) {
	const n = 30000
	list := convergedList(n)
	set := fixture.Compile(b, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n")
	var cpu, heap [2][]float64
	for b.Loop() {
		for i, enqueueAll := range []bool{false, true} {
			c, h := restartOnce(b, list, set, enqueueAll)
			cpu[i], heap[i] = append(cpu[i], c.Seconds()), append(heap[i], float64(h)/n)
		}
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(med(cpu[0])*1e6/n, "cpu-µs/object-decided")
	b.ReportMetric(med(cpu[1])*1e6/n, "cpu-µs/object-enqueued")
	b.ReportMetric(med(heap[0]), "heap-B/object-decided")
	b.ReportMetric(med(heap[1]), "heap-B/object-enqueued")
	b.ReportMetric(med(cpu[0])/med(cpu[1]), "cpu-ratio")
	b.ReportMetric(med(heap[0])/med(heap[1]), "heap-ratio")
}

// restartOnce runs a controller on list until every object is synced, and
// returns the process CPU it took and the live heap then, less the heap
// before it started.
func restartOnce(b *testing.B, list *metav1.PartialObjectMetadataList, set *rules.Set, enqueueAll bool) (time.Duration, uint64) {
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background().V(1)))
	defer cancel()
	m := metrics.New()
	c := NewController(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), listOnly{list}, Options{Workers: 8, Metrics: m})
	c.enqueueInitialList = enqueueAll
	before := fixture.LiveHeap()
	start := cpuTime()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	c.SetRules(ctx, set)
	synced := m.Syncs.WithLabelValues("configmaps", metrics.Success)
	testutil.WaitFor(b, 10*time.Minute, "every object synced and the queue empty", func() bool {
		return value(b, synced) >= float64(len(list.Items)) && c.queue.Len() == 0
	})
	took := cpuTime() - start
	heap := fixture.LiveHeap() - before
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return took, heap
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// convergedList returns n realistic ConfigMaps in namespace ns that carry
// annotation a=1, which this controller set.
func convergedList(n int) *metav1.PartialObjectMetadataList {
	mf := []metav1.ManagedFieldsEntry{
		fixture.OwnedFields("kubectl-client-side-apply", []string{"kubectl.kubernetes.io/last-applied-configuration"}, []string{"app", "team"}),
		fixture.OwnedFields("helm", []string{"meta.helm.sh/release-name"}, []string{"app.kubernetes.io/managed-by"}),
		fixture.OwnedFields(reconcile.FieldManager, []string{"a"}, nil),
	}
	list := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range n {
		lbls := helmLabels(fmt.Sprintf("web-%d", i), "web")
		anns := map[string]string{"a": "1", "kubectl.kubernetes.io/last-applied-configuration": "{}",
			"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"}
		list.Items = append(list.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: fmt.Sprintf("cm-%06d", i), UID: "u", ResourceVersion: "1",
			Labels: lbls, Annotations: anns, ManagedFields: mf}})
	}
	return list
}

// listOnly is a metadata client that lists configmaps from memory, and
// one namespace, and whose watches never deliver anything.
type listOnly struct {
	list *metav1.PartialObjectMetadataList
}

func (l listOnly) IsWatchListSemanticsUnSupported() bool { return true }

func (l listOnly) Resource(gvr schema.GroupVersionResource) metadata.Getter {
	if gvr == namespaces {
		return listOnlyResource{list: &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"},
			Items: []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Name: "ns", ResourceVersion: "1"}}}}}
	}
	return listOnlyResource{list: l.list}
}

type listOnlyResource struct {
	metadata.ResourceInterface // nil: only List and Watch are served
	list                       *metav1.PartialObjectMetadataList
}

func (r listOnlyResource) Namespace(string) metadata.ResourceInterface { return r }

func (r listOnlyResource) List(context.Context, metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	out := *r.list
	return &out, nil
}

func (r listOnlyResource) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// helmLabels returns the ten labels of an object of app that Helm
// installed as release instance, as the benchmarks' realistic objects
// carry them.
func helmLabels(app, instance string) map[string]string {
	return map[string]string{"app": app, "team": "payments", "env": "prod", "tier": "web",
		"app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": instance, "app.kubernetes.io/version": "1.2.3",
		"app.kubernetes.io/component": "frontend", "app.kubernetes.io/part-of": "shop", "helm.sh/chart": "web-1.2.3"}
}
