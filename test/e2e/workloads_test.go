package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// workload is one of the four resources the shipped rules.yaml annotates,
// and how to make an object of it.
type workload struct {
	gvr  schema.GroupVersionResource
	make func(t testing.TB, namespace, name string) *unstructured.Unstructured
}

// workloads are the resources of the shipped rules.yaml. Deployments and
// ReplicaSets have no replicas and nothing schedules the Pods: without a
// kube-controller-manager, only the test and the controller change them.
var workloads = []workload{
	{h.Deployments, func(t testing.TB, ns, name string) *unstructured.Unstructured { return h.Deployment(t, ns, name, 0) }},
	{h.ReplicaSets, h.ReplicaSet},
	{h.Pods, h.Pod},
	{h.Frigates, func(t testing.TB, ns, name string) *unstructured.Unstructured {
		f := h.FrigateSample(t, ns)
		f.SetName(name)
		return f
	}},
}

// workloadResources are the resource labels of the API server's metrics
// for workloads.
func workloadResources() []string {
	names := make([]string, len(workloads))
	for i, w := range workloads {
		names[i] = w.gvr.Resource
	}
	return names
}

// batchLabel labels each object of the workloads with the prefix of its
// name, so that a test can wait for one batch alone.
const batchLabel = "e2e.kube-annotator.io/batch"

// workloadObject is the i-th object named prefix-i: the resources take
// turns, so that n objects are a quarter of each.
func workloadObject(t testing.TB, ns, prefix string, i int) (schema.GroupVersionResource, *unstructured.Unstructured) {
	w := workloads[i%len(workloads)]
	obj := w.make(t, ns, fmt.Sprintf("%s-%d", prefix, i))
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[batchLabel] = prefix
	obj.SetLabels(labels)
	return w.gvr, obj
}

// workloadsOn creates n objects prefix-0 … of the workloads, a quarter
// each, in ns on the control plane e.
func workloadsOn(t *testing.T, e *h.Env, ns, prefix string, n int) {
	t.Helper()
	inParallel(n, func(i int) {
		gvr, obj := workloadObject(t, ns, prefix, i)
		e.Create(t, gvr, ns, obj)
	})
}

// inParallel calls fn(i) for i in [0, n) on at most 8 goroutines at once:
// enough to seed thousands of objects quickly without swamping the API
// server.
func inParallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

// listWorkloads lists the metadata of the workloads' objects in ns that
// match the label selector sel (all when empty).
func listWorkloads(t *testing.T, e *h.Env, ns, sel string) []metav1.PartialObjectMetadata {
	t.Helper()
	client, err := metadata.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	var out []metav1.PartialObjectMetadata
	for _, w := range workloads {
		list, err := client.Resource(w.gvr).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatalf("list %s in %s: %v", w.gvr.Resource, ns, err)
		}
		out = append(out, list.Items...)
	}
	return out
}

// workloadsAnnotatedOn counts the workloads' objects in ns that match sel,
// and those of them that carry the shipped rules' annotation.
func workloadsAnnotatedOn(t *testing.T, e *h.Env, ns, sel string) (done, total int) {
	t.Helper()
	for _, o := range listWorkloads(t, e, ns, sel) {
		total++
		if o.Annotations[sampleKey] == sampleValue {
			done++
		}
	}
	return done, total
}

// waitWorkloadsOn waits until every object of the workloads in ns that
// matches sel (all when empty) carries the shipped rules' annotation.
func waitWorkloadsOn(t *testing.T, e *h.Env, ns, sel string, timeout time.Duration) time.Duration {
	t.Helper()
	return waitAllAnnotated(t, timeout, "objects", func() (int, int) { return workloadsAnnotatedOn(t, e, ns, sel) })
}

// waitAllAnnotated polls count until it reports every object of at least
// one annotated, and returns how long that took; it fails the test, naming
// what it counts, after timeout.
func waitAllAnnotated(t *testing.T, timeout time.Duration, what string, count func() (done, total int)) time.Duration {
	t.Helper()
	start := time.Now()
	var done, total int
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		done, total = count()
		return total > 0 && done == total, nil
	})
	if err != nil {
		t.Fatalf("%d of %d %s annotated after %v", done, total, what, timeout)
	}
	return time.Since(start)
}

// workloadWrites counts the patches (merge patches and server-side
// applies) to the workloads in d.
func workloadWrites(d h.Requests) int {
	return d.Count("PATCH", workloadResources()...) + d.Count("APPLY", workloadResources()...)
}
