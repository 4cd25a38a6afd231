package main

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// latency creates n Pods one at a time, each once the previous one was
// seen annotated, and returns for each the time from its create request's
// return to the benchmark's watch seeing it annotated. It deletes them
// before it returns.
func (b *bench) latency(ctx context.Context, n int) ([]time.Duration, error) {
	logf("Measuring create→annotated latency of %d Pods created one at a time", n)
	var lat []time.Duration
	var created []objectRef
	defer func() {
		if err := b.deleteAll(ctx, created); err != nil {
			logf("  could not delete the latency Pods: %v", err)
		}
	}()
	for i := range n {
		ref := objectRef{resource: h.Pods, namespace: latencyNamespace, name: fmt.Sprintf("latency-%04d", i)}
		seen := b.tracker.expect(ref)
		_, err := b.dynamic.Resource(h.Pods).Namespace(ref.namespace).Create(ctx, pod(ref.namespace, ref.name), metav1.CreateOptions{})
		createdAt := time.Now()
		if err != nil {
			b.tracker.forget(ref)
			return nil, fmt.Errorf("create %s: %w", ref, err)
		}
		created = append(created, ref)
		select {
		case at := <-seen:
			// The watch can deliver the annotated Pod before the create's
			// response arrives; that counts as no latency at all.
			lat = append(lat, max(at.Sub(createdAt), 0))
		case <-time.After(30 * time.Second):
			b.tracker.forget(ref)
			return nil, fmt.Errorf("%s not annotated within 30s", ref)
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	return lat, nil
}

// deleteAll deletes refs and waits until the benchmark's watch has seen
// them go.
func (b *bench) deleteAll(ctx context.Context, refs []objectRef) error {
	err := forEach(ctx, len(refs), clientParallelism, func(ctx context.Context, i int) error {
		ref := refs[i]
		if err := b.dynamic.Resource(ref.resource).Namespace(ref.namespace).Delete(ctx, ref.name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete %s: %w", ref, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return b.tracker.waitFor(ctx, "deleting", time.Minute, b.tracker.is(b.objects, -1), nil)
}
