package rig

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// CreateNamespaces creates the seed and latency namespaces, each with the
// "default" ServiceAccount that Pods need (no controller creates it here).
func (b *Bench) CreateNamespaces(ctx context.Context) error {
	names := []string{workload.LatencyNamespace}
	for i := range workload.SeedNamespaces {
		names = append(names, workload.SeedNamespace(i))
	}
	for _, ns := range names {
		if _, err := b.Dynamic.Resource(h.Namespaces).Create(ctx, h.Object("v1", "Namespace", "", ns), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
		if _, err := b.Dynamic.Resource(h.SAs).Namespace(ns).Create(ctx, h.Object("v1", "ServiceAccount", ns, "default"), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create serviceaccount %s/default: %w", ns, err)
		}
	}
	return nil
}

// Seed creates objects until there are total, in parallel, and waits until
// the benchmark's watch has seen them all.
func (b *Bench) Seed(ctx context.Context, total int) error {
	from := b.Objects
	progress.Logf("Seeding %d %s objects (%d to %d) with %d clients in parallel", total-from, b.Shape.Name, from, total, b.Opts.Clients)
	start := time.Now()
	var created atomic.Int64
	stop := progress.Every(5*time.Second, func() {
		n := created.Load()
		progress.Logf("  seeded %d/%d (%.0f objects/s)", n, total-from, float64(n)/time.Since(start).Seconds())
	})
	err := workload.ForEach(ctx, total-from, b.Opts.Clients, func(ctx context.Context, i int) error {
		r, ref := workload.SeedRef(from + i)
		if err := b.Shape.Create(ctx, b.Dynamic, r, ref); err != nil {
			return fmt.Errorf("create %s: %w", ref, err)
		}
		created.Add(1)
		return nil
	})
	stop()
	if err != nil {
		return err
	}
	b.Objects = total
	if err := b.Tracker.WaitFor(ctx, "seeded objects", b.Opts.Timeout, b.Tracker.Is(total, -1), nil); err != nil {
		return err
	}
	progress.Logf("Seeded %d objects in %v (%.0f objects/s)", total-from, progress.Since(start), float64(total-from)/time.Since(start).Seconds())
	return nil
}

// DeleteSeeded deletes every seeded object and waits until the
// benchmark's watch has seen them go.
func (b *Bench) DeleteSeeded(ctx context.Context) error {
	progress.Logf("Deleting the %d %s objects", b.Objects, b.Shape.Name)
	start := time.Now()
	for _, r := range workload.Resources {
		for i := range workload.SeedNamespaces {
			err := b.Dynamic.Resource(r.GVR).Namespace(workload.SeedNamespace(i)).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
			if err != nil {
				return fmt.Errorf("delete the %s in %s: %w", r.GVR.Resource, workload.SeedNamespace(i), err)
			}
		}
	}
	b.Objects = 0
	if err := b.Tracker.WaitFor(ctx, "deleting", b.Opts.Timeout, b.Tracker.Is(0, -1), nil); err != nil {
		return err
	}
	progress.Logf("Deleted them in %v", progress.Since(start))
	return nil
}

// Reset removes the annotation from every object, checks with a fresh
// list that no object carries it, and waits until the benchmark's watch
// agrees, so that the next run starts from scratch.
func (b *Bench) Reset(ctx context.Context) error {
	start := time.Now()
	annotated, err := b.AnnotatedObjects(ctx)
	if err != nil {
		return err
	}
	err = workload.ForEach(ctx, len(annotated), b.Opts.Clients, func(ctx context.Context, i int) error {
		ref := annotated[i]
		_, err := b.Dynamic.Resource(ref.Resource).Namespace(ref.Namespace).Patch(ctx, ref.Name, types.MergePatchType, workload.UnsetPatch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("remove annotation from %s: %w", ref, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	left, err := b.AnnotatedObjects(ctx)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("reset: %d objects still annotated after removing it, e.g. %s", len(left), left[0])
	}
	if err := b.Tracker.WaitFor(ctx, "reset", b.Opts.Timeout, b.Tracker.Is(b.Objects, 0), nil); err != nil {
		return err
	}
	progress.Logf("Reset: removed the annotation from %d objects in %v; none has it", len(annotated), progress.Since(start))
	return nil
}

// AnnotatedObjects lists every object that carries the annotation, reading
// from the API server, not from the benchmark's watch.
func (b *Bench) AnnotatedObjects(ctx context.Context) ([]workload.ObjectRef, error) {
	var refs []workload.ObjectRef
	for _, r := range workload.Resources {
		err := workload.EachObject(ctx, b.Metadata, r.GVR, func(m metav1.PartialObjectMetadata) error {
			if _, ok := m.Annotations[workload.AnnotationKey]; ok {
				refs = append(refs, workload.ObjectRef{Resource: r.GVR, Namespace: m.Namespace, Name: m.Name})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return refs, nil
}
