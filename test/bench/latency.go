package main

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
		c, err := b.createAnnotated(ctx, ref, pod(ref.namespace, ref.name), &created)
		if err != nil {
			return nil, err
		}
		lat = append(lat, c.latency)
	}
	return lat, nil
}

// createdObject is what creating one object and waiting for its
// annotation measured.
type createdObject struct {
	// request is the create request's own latency, from its start until
	// its response.
	request time.Duration
	// latency is from the create request's return until the benchmark's
	// watch saw the object annotated: 0 when the response carried the
	// annotation already, or when the watch saw it before the response.
	latency time.Duration
	// inResponse is whether the create response carried the annotation.
	inResponse bool
}

// createAnnotated creates obj, named by ref, adds ref to created once it
// exists, and waits up to 30s until the benchmark's watch sees it
// annotated.
func (b *bench) createAnnotated(ctx context.Context, ref objectRef, obj *unstructured.Unstructured, created *[]objectRef) (createdObject, error) {
	var c createdObject
	seen := b.tracker.expect(ref)
	start := time.Now()
	resp, err := b.dynamic.Resource(ref.resource).Namespace(ref.namespace).Create(ctx, obj, metav1.CreateOptions{})
	returned := time.Now()
	if err != nil {
		b.tracker.forget(ref)
		return c, fmt.Errorf("create %s: %w", ref, err)
	}
	*created = append(*created, ref)
	c.request = returned.Sub(start)
	c.inResponse = resp.GetAnnotations()[annotationKey] == annotationValue
	select {
	case at := <-seen:
		if !c.inResponse {
			// The watch can deliver the annotated object before the
			// create's response arrives; that counts as no latency at all.
			c.latency = max(at.Sub(returned), 0)
		}
		return c, nil
	case <-time.After(30 * time.Second):
		b.tracker.forget(ref)
		return c, fmt.Errorf("%s not annotated within 30s", ref)
	case <-ctx.Done():
		return c, context.Cause(ctx)
	}
}

// deleteAll deletes refs and waits until the benchmark's watch has seen
// them go.
func (b *bench) deleteAll(ctx context.Context, refs []objectRef) error {
	err := forEach(ctx, len(refs), b.opts.clients, func(ctx context.Context, i int) error {
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
