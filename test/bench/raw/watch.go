package raw

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"

	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
)

// echoWait is how long the raw loop waits, once done, for the events of its
// own writes.
const echoWait = 30 * time.Second

// echoWatch counts the events of the four resources' watches.
type echoWatch struct {
	events   atomic.Int64
	watchers []watch.Interface
	wg       sync.WaitGroup
}

// startEchoWatch watches the metadata of the four resources from their
// current resourceVersion: a list of one object each gives it, so that the
// watch sends no initial events.
func startEchoWatch(ctx context.Context, client metadata.Interface) (*echoWatch, error) {
	e := &echoWatch{}
	for _, r := range workload.Resources {
		list, err := client.Resource(r.GVR).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			e.stop()
			return nil, fmt.Errorf("list %s: %w", r.GVR.Resource, err)
		}
		w, err := client.Resource(r.GVR).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			e.stop()
			return nil, fmt.Errorf("watch %s: %w", r.GVR.Resource, err)
		}
		e.watchers = append(e.watchers, w)
		e.wg.Go(func() {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Modified {
					e.events.Add(1)
				}
			}
		})
	}
	return e, nil
}

// await waits up to echoWait until the watches have received n events.
func (e *echoWatch) await(ctx context.Context, n int64) error {
	deadline := time.Now().Add(echoWait)
	for e.events.Load() < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("the watch received %d events of %d writes in %v", e.events.Load(), n, echoWait)
		}
		if err := progress.Sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

func (e *echoWatch) stop() {
	for _, w := range e.watchers {
		w.Stop()
	}
	e.wg.Wait()
}
