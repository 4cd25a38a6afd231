package tracker

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// Tracker is the benchmark's own view of the objects: one metadata
// informer per resource, started once; for each object whether it carries
// the annotation, and when the first and the last object became annotated.
// After its initial list it only watches, so that it adds no GET or LIST to
// what the runners are measured by; Requests counts what it sends, to
// prove it.
type Tracker struct {
	// Requests counts the requests the tracker sent.
	Requests *h.Counter

	mu        sync.Mutex
	state     map[workload.ObjectRef]bool // every object, and whether it is annotated
	annotated int
	// firstAnnotated is when an object became annotated while none was,
	// lastAnnotated when the last object became annotated.
	firstAnnotated, lastAnnotated time.Time
	// waiters are told when an object becomes annotated.
	waiters map[workload.ObjectRef]chan time.Time
}

// Start starts the informers under ctx and waits for their initial
// lists.
func Start(ctx context.Context, client metadata.Interface, requests *h.Counter) (*Tracker, error) {
	t := &Tracker{Requests: requests, state: map[workload.ObjectRef]bool{}, waiters: map[workload.ObjectRef]chan time.Time{}}
	factory := metadatainformer.NewSharedInformerFactory(client, 0)
	for _, r := range workload.Resources {
		inf := factory.ForResource(r.GVR).Informer()
		if err := inf.SetTransform(slim); err != nil {
			return nil, fmt.Errorf("watch %s: %w", r.GVR.Resource, err)
		}
		ref := func(obj any) (workload.ObjectRef, bool) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			m, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				return workload.ObjectRef{}, false
			}
			return workload.ObjectRef{Resource: r.GVR, Namespace: m.Namespace, Name: m.Name}, true
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { t.observe(ref, obj, false) },
			UpdateFunc: func(_, obj any) { t.observe(ref, obj, false) },
			DeleteFunc: func(obj any) { t.observe(ref, obj, true) },
		}); err != nil {
			return nil, fmt.Errorf("watch %s: %w", r.GVR.Resource, err)
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
		v, annotated := m.Annotations[workload.AnnotationKey]
		m.ManagedFields, m.Labels, m.Annotations = nil, nil, nil
		if annotated {
			m.Annotations = map[string]string{workload.AnnotationKey: v}
		}
	}
	return obj, nil
}

func (t *Tracker) observe(refOf func(any) (workload.ObjectRef, bool), obj any, deleted bool) {
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
		is = m.Annotations[workload.AnnotationKey] == workload.AnnotationValue
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

// Counts returns how many objects the tracker knows and how many of them
// are annotated.
func (t *Tracker) Counts() (total, annotated int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.state), t.annotated
}

// Span returns when the first object became annotated after none was, and
// when the last one did.
func (t *Tracker) Span() (first, last time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.firstAnnotated, t.lastAnnotated
}

// Expect returns a channel that receives the time at which ref is first
// seen annotated. Call it before creating the object.
func (t *Tracker) Expect(ref workload.ObjectRef) <-chan time.Time {
	ch := make(chan time.Time, 1)
	t.mu.Lock()
	t.waiters[ref] = ch
	t.mu.Unlock()
	return ch
}

// Forget drops the waiter of ref, if any.
func (t *Tracker) Forget(ref workload.ObjectRef) {
	t.mu.Lock()
	delete(t.waiters, ref)
	t.mu.Unlock()
}

// Is returns a condition for WaitFor: total objects known (-1: any) of
// which annotated carry the annotation (-1: any).
func (t *Tracker) Is(total, annotated int) func(total, annotated int) bool {
	return func(n, a int) bool {
		return (total < 0 || n == total) && (annotated < 0 || a == annotated)
	}
}

// WaitFor waits up to timeout until cond holds for the tracker's counts,
// checking every 20ms; alive, when not nil, is checked as often and ends
// the wait with its error. Every 5 seconds it logs where it is.
func (t *Tracker) WaitFor(ctx context.Context, what string, timeout time.Duration, cond func(total, annotated int) bool, alive func() error) error {
	start := time.Now()
	stop := progress.Every(5*time.Second, func() {
		n, a := t.Counts()
		progress.Logf("  %s: %d of %d objects annotated after %v", what, a, n, progress.Since(start))
	})
	defer stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n, a := t.Counts()
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
