package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// The annotation every runner sets.
const (
	annotationKey   = "sample-controller"
	annotationValue = "True"
)

// resource is one of the benchmark's resources and how to make an object
// of it.
type resource struct {
	gvr  schema.GroupVersionResource
	make func(namespace, name string) *unstructured.Unstructured
}

// resources are the four resources every runner annotates. Nothing runs
// their controllers here (no kube-controller-manager, scheduler or
// kubelet), so the benchmark's objects change only when a runner or the
// benchmark changes them.
var resources = []resource{
	{h.Deployments, deployment},
	{h.ReplicaSets, replicaSet},
	{h.Pods, pod},
	{h.Frigates, frigate},
}

// resourceNames are the resource labels of apiserver_request_total for
// resources.
func resourceNames() []string {
	names := make([]string, len(resources))
	for i, r := range resources {
		names[i] = r.gvr.Resource
	}
	return names
}

// Namespaces of the seeded objects, and of the latency measurement's Pods.
const (
	seedNamespaces   = 5
	latencyNamespace = "bench-latency"
)

func seedNamespace(i int) string { return fmt.Sprintf("bench-%d", i) }

// objectRef names one object of one resource.
type objectRef struct {
	resource  schema.GroupVersionResource
	namespace string
	name      string
}

func (r objectRef) String() string {
	return fmt.Sprintf("%s %s/%s", r.resource.Resource, r.namespace, r.name)
}

// seedRef is the i-th seeded object: resources take turns, and each
// resource's objects are spread over the namespaces.
func seedRef(i int) (resource, objectRef) {
	r := resources[i%len(resources)]
	n := i / len(resources)
	return r, objectRef{resource: r.gvr, namespace: seedNamespace(n % seedNamespaces), name: fmt.Sprintf("obj-%06d", n)}
}

func object(apiVersion, kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"spec":       spec,
	}}
}

func podSpec() map[string]any {
	return map[string]any{"containers": []any{map[string]any{"name": "app", "image": "registry.invalid/app:1"}}}
}

func deployment(namespace, name string) *unstructured.Unstructured {
	labels := map[string]any{"app": name}
	return object("apps/v1", "Deployment", namespace, name, map[string]any{
		"replicas": int64(0),
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec()},
	})
}

func replicaSet(namespace, name string) *unstructured.Unstructured {
	labels := map[string]any{"rs": name}
	return object("apps/v1", "ReplicaSet", namespace, name, map[string]any{
		"replicas": int64(0),
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec()},
	})
}

func pod(namespace, name string) *unstructured.Unstructured {
	return object("v1", "Pod", namespace, name, podSpec())
}

func frigate(namespace, name string) *unstructured.Unstructured {
	return object("ship.nwiizo.dev/v1beta1", "Frigate", namespace, name, map[string]any{"foo": "bar"})
}

// listPageSize is the page size of every list the benchmark sends, and
// maxListPages bounds how many pages one list may take, well above what
// maxObjects need.
const (
	listPageSize = 500
	maxListPages = 4 * maxObjects / listPageSize
)

// eachObject calls fn for every object of gvr in all namespaces, reading
// their metadata page by page, and stops at fn's first error.
func eachObject(ctx context.Context, client metadata.Interface, gvr schema.GroupVersionResource, fn func(metav1.PartialObjectMetadata) error) error {
	opts := metav1.ListOptions{Limit: listPageSize}
	for range maxListPages {
		list, err := client.Resource(gvr).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("list %s: %w", gvr.Resource, err)
		}
		for _, item := range list.Items {
			if err := fn(item); err != nil {
				return err
			}
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
	return fmt.Errorf("list %s: more than %d pages", gvr.Resource, maxListPages)
}

// forEach calls fn(i) for i in [0, n) on at most workers goroutines. It
// stops at the first error, and returns it.
func forEach(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
