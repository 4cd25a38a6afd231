package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// tracker is the benchmark's own view of the objects: one metadata
// informer per resource, started once; for each object whether it carries
// the annotation, and when the first and the last object became annotated.
// After its initial list it only watches, so that it adds no GET or LIST to
// what the runners are measured by; requests counts what it sends, to
// prove it.
type tracker struct {
	requests *h.Counter

	mu        sync.Mutex
	state     map[objectRef]bool // every object, and whether it is annotated
	annotated int
	// firstAnnotated is when an object became annotated while none was,
	// lastAnnotated when the last object became annotated.
	firstAnnotated, lastAnnotated time.Time
	// waiters are told when an object becomes annotated.
	waiters map[objectRef]chan time.Time
}

// startTracker starts the informers under ctx and waits for their initial
// lists.
func startTracker(ctx context.Context, client metadata.Interface, requests *h.Counter) (*tracker, error) {
	t := &tracker{requests: requests, state: map[objectRef]bool{}, waiters: map[objectRef]chan time.Time{}}
	factory := metadatainformer.NewSharedInformerFactory(client, 0)
	for _, r := range resources {
		inf := factory.ForResource(r.gvr).Informer()
		if err := inf.SetTransform(slim); err != nil {
			return nil, fmt.Errorf("watch %s: %w", r.gvr.Resource, err)
		}
		ref := func(obj any) (objectRef, bool) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			m, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				return objectRef{}, false
			}
			return objectRef{resource: r.gvr, namespace: m.Namespace, name: m.Name}, true
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { t.observe(ref, obj, false) },
			UpdateFunc: func(_, obj any) { t.observe(ref, obj, false) },
			DeleteFunc: func(obj any) { t.observe(ref, obj, true) },
		}); err != nil {
			return nil, fmt.Errorf("watch %s: %w", r.gvr.Resource, err)
		}
	}
	factory.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for gvr, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			return nil, fmt.Errorf("watch %s: not synced within a minute", gvr.Resource)
		}
	}
	return t, nil
}

// slim keeps of an object only what the tracker reads, its identity and
// the annotation, so that the benchmark's memory stays small with
// realistic objects. It runs on objects fresh from the decoder, which
// nothing else has seen yet.
func slim(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		v, annotated := m.Annotations[annotationKey]
		m.ManagedFields, m.Labels, m.Annotations = nil, nil, nil
		if annotated {
			m.Annotations = map[string]string{annotationKey: v}
		}
	}
	return obj, nil
}

func (t *tracker) observe(refOf func(any) (objectRef, bool), obj any, deleted bool) {
	ref, ok := refOf(obj)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.state[ref]
	is := false
	if deleted {
		delete(t.state, ref)
	} else {
		m := obj.(*metav1.PartialObjectMetadata)
		is = m.Annotations[annotationKey] == annotationValue
		t.state[ref] = is
	}
	switch {
	case is && !was:
		if t.annotated == 0 {
			t.firstAnnotated = now
		}
		t.annotated++
		t.lastAnnotated = now
		if ch, ok := t.waiters[ref]; ok {
			ch <- now
			delete(t.waiters, ref)
		}
	case was && !is:
		t.annotated--
	}
}

// counts returns how many objects the tracker knows and how many of them
// are annotated.
func (t *tracker) counts() (total, annotated int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.state), t.annotated
}

// span returns when the first object became annotated after none was, and
// when the last one did.
func (t *tracker) span() (first, last time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.firstAnnotated, t.lastAnnotated
}

// expect returns a channel that receives the time at which ref is first
// seen annotated. Call it before creating the object.
func (t *tracker) expect(ref objectRef) <-chan time.Time {
	ch := make(chan time.Time, 1)
	t.mu.Lock()
	t.waiters[ref] = ch
	t.mu.Unlock()
	return ch
}

// forget drops the waiter of ref, if any.
func (t *tracker) forget(ref objectRef) {
	t.mu.Lock()
	delete(t.waiters, ref)
	t.mu.Unlock()
}

// is returns a condition for waitFor: total objects known (-1: any) of
// which annotated carry the annotation (-1: any).
func (t *tracker) is(total, annotated int) func(total, annotated int) bool {
	return func(n, a int) bool {
		return (total < 0 || n == total) && (annotated < 0 || a == annotated)
	}
}

// waitFor waits up to timeout until cond holds for the tracker's counts,
// checking every 20ms; alive, when not nil, is checked as often and ends
// the wait with its error. Every 5 seconds it logs where it is.
func (t *tracker) waitFor(ctx context.Context, what string, timeout time.Duration, cond func(total, annotated int) bool, alive func() error) error {
	start := time.Now()
	stop := progress(5*time.Second, func() {
		n, a := t.counts()
		logf("  %s: %d of %d objects annotated after %v", what, a, n, since(start))
	})
	defer stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n, a := t.counts()
		if cond(n, a) {
			return nil
		}
		if alive != nil {
			if err := alive(); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
		if time.Since(start) > timeout {
			return fmt.Errorf("%s: timed out after %v: %d of %d objects annotated", what, timeout, a, n)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, context.Cause(ctx))
		case <-tick.C:
		}
	}
}
