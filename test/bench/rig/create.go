package rig

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/test/bench/workload"
)

// CreatedObject is what creating one object and waiting for its
// annotation measured.
type CreatedObject struct {
	// Request is the create request's own latency, from its start until
	// its response.
	Request time.Duration
	// Latency is from the create request's return until the benchmark's
	// watch saw the object annotated: 0 when the response carried the
	// annotation already, or when the watch saw it before the response.
	Latency time.Duration
	// InResponse is whether the create response carried the annotation.
	InResponse bool
}

// CreateAnnotated creates obj, named by ref, adds ref to created once it
// exists, and waits up to 30s until the benchmark's watch sees it
// annotated.
func (b *Bench) CreateAnnotated(ctx context.Context, ref workload.ObjectRef, obj *unstructured.Unstructured, created *[]workload.ObjectRef) (CreatedObject, error) {
	var c CreatedObject
	seen := b.Tracker.Expect(ref)
	start := time.Now()
	resp, err := b.Dynamic.Resource(ref.Resource).Namespace(ref.Namespace).Create(ctx, obj, metav1.CreateOptions{})
	returned := time.Now()
	if err != nil {
		b.Tracker.Forget(ref)
		return c, fmt.Errorf("create %s: %w", ref, err)
	}
	*created = append(*created, ref)
	c.Request = returned.Sub(start)
	c.InResponse = resp.GetAnnotations()[workload.AnnotationKey] == workload.AnnotationValue
	select {
	case at := <-seen:
		if !c.InResponse {
			// The watch can deliver the annotated object before the
			// create's response arrives; that counts as no latency at all.
			c.Latency = max(at.Sub(returned), 0)
		}
		return c, nil
	case <-time.After(30 * time.Second):
		b.Tracker.Forget(ref)
		return c, fmt.Errorf("%s not annotated within 30s", ref)
	case <-ctx.Done():
		return c, context.Cause(ctx)
	}
}

// DeleteAll deletes refs and waits until the benchmark's watch has seen
// them go.
func (b *Bench) DeleteAll(ctx context.Context, refs []workload.ObjectRef) error {
	err := workload.ForEach(ctx, len(refs), b.Opts.Clients, func(ctx context.Context, i int) error {
		ref := refs[i]
		if err := b.Dynamic.Resource(ref.Resource).Namespace(ref.Namespace).Delete(ctx, ref.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete %s: %w", ref, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return b.Tracker.WaitFor(ctx, "deleting", time.Minute, b.Tracker.Is(b.Objects, -1), nil)
}
