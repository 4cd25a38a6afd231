package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// defaultClients bounds the benchmark's own requests in flight while it
// seeds, resets and cleans up, unless --clients says otherwise.
const defaultClients = 16

// createNamespaces creates the seed and latency namespaces, each with the
// "default" ServiceAccount that Pods need (no controller creates it here).
func (b *bench) createNamespaces(ctx context.Context) error {
	names := []string{latencyNamespace}
	for i := range seedNamespaces {
		names = append(names, seedNamespace(i))
	}
	for _, ns := range names {
		if _, err := b.dynamic.Resource(h.Namespaces).Create(ctx, h.Object("v1", "Namespace", "", ns), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
		if _, err := b.dynamic.Resource(h.SAs).Namespace(ns).Create(ctx, h.Object("v1", "ServiceAccount", ns, "default"), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create serviceaccount %s/default: %w", ns, err)
		}
	}
	return nil
}

// seed creates objects until there are total, in parallel, and waits until
// the benchmark's watch has seen them all.
func (b *bench) seed(ctx context.Context, total int) error {
	from := b.objects
	logf("Seeding %d %s objects (%d to %d) with %d clients in parallel", total-from, b.shape.name, from, total, b.opts.clients)
	start := time.Now()
	var created atomic.Int64
	stop := progress(5*time.Second, func() {
		n := created.Load()
		logf("  seeded %d/%d (%.0f objects/s)", n, total-from, float64(n)/time.Since(start).Seconds())
	})
	err := forEach(ctx, total-from, b.opts.clients, func(ctx context.Context, i int) error {
		r, ref := seedRef(from + i)
		if err := b.shape.create(ctx, b.dynamic, r, ref); err != nil {
			return fmt.Errorf("create %s: %w", ref, err)
		}
		created.Add(1)
		return nil
	})
	stop()
	if err != nil {
		return err
	}
	b.objects = total
	if err := b.tracker.waitFor(ctx, "seeded objects", b.opts.timeout, b.tracker.is(total, -1), nil); err != nil {
		return err
	}
	logf("Seeded %d objects in %v (%.0f objects/s)", total-from, since(start), float64(total-from)/time.Since(start).Seconds())
	return nil
}

// deleteSeeded deletes every seeded object and waits until the
// benchmark's watch has seen them go.
func (b *bench) deleteSeeded(ctx context.Context) error {
	logf("Deleting the %d %s objects", b.objects, b.shape.name)
	start := time.Now()
	for _, r := range resources {
		for i := range seedNamespaces {
			err := b.dynamic.Resource(r.gvr).Namespace(seedNamespace(i)).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
			if err != nil {
				return fmt.Errorf("delete the %s in %s: %w", r.gvr.Resource, seedNamespace(i), err)
			}
		}
	}
	b.objects = 0
	if err := b.tracker.waitFor(ctx, "deleting", b.opts.timeout, b.tracker.is(0, -1), nil); err != nil {
		return err
	}
	logf("Deleted them in %v", since(start))
	return nil
}

// unsetPatch removes the annotation.
var unsetPatch = func() []byte {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{annotationKey: nil}}})
	if err != nil {
		panic(err)
	}
	return data
}()

// reset removes the annotation from every object, checks with a fresh
// list that no object carries it, and waits until the benchmark's watch
// agrees, so that the next run starts from scratch.
func (b *bench) reset(ctx context.Context) error {
	start := time.Now()
	annotated, err := b.annotatedObjects(ctx)
	if err != nil {
		return err
	}
	err = forEach(ctx, len(annotated), b.opts.clients, func(ctx context.Context, i int) error {
		ref := annotated[i]
		_, err := b.dynamic.Resource(ref.resource).Namespace(ref.namespace).Patch(ctx, ref.name, types.MergePatchType, unsetPatch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("remove annotation from %s: %w", ref, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	left, err := b.annotatedObjects(ctx)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("reset: %d objects still annotated after removing it, e.g. %s", len(left), left[0])
	}
	if err := b.tracker.waitFor(ctx, "reset", b.opts.timeout, b.tracker.is(b.objects, 0), nil); err != nil {
		return err
	}
	logf("Reset: removed the annotation from %d objects in %v; none has it", len(annotated), since(start))
	return nil
}

// annotatedObjects lists every object that carries the annotation, reading
// from the API server, not from the benchmark's watch.
func (b *bench) annotatedObjects(ctx context.Context) ([]objectRef, error) {
	var refs []objectRef
	for _, r := range resources {
		err := eachObject(ctx, b.metadata, r.gvr, func(m metav1.PartialObjectMetadata) error {
			if _, ok := m.Annotations[annotationKey]; ok {
				refs = append(refs, objectRef{resource: r.gvr, namespace: m.Namespace, name: m.Name})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return refs, nil
}
