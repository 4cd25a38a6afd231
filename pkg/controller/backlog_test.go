package controller

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/backlog"
	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"github.com/kube-annotator/kube-annotator/test/testutil"
	"k8s.io/utils/clock"
)

// A first convergence of more objects than the work queue holds at once
// writes every one of them: the initial list's keys past the bound wait
// in the backlog and go into the queue as it drains. (How many the queue
// holds at once, package backlog's tests check.)
func TestBurstPastTheBound(t *testing.T) {
	const objects, bound = 60, 8
	objs := make([]*unstructured.Unstructured, objects)
	for i := range objs {
		objs[i] = fixture.ConfigMap("ns", fmt.Sprintf("cm-%02d", i), nil)
	}
	client := newClient(objs...)
	_, ctx := ktesting.NewTestContext(t)
	c := newController(client, Options{Workers: 2})
	c.queue.ShutDown()
	c.limiter = retry.NewLimiter[queued](clock.RealClock{}, -1, 0)
	// As NewController makes it, with a bound of 8.
	cfg := workqueue.TypedRateLimitingQueueConfig[queued]{Name: "kube-annotator", MetricsProvider: c.opts.Metrics.Workqueue}
	c.queue = backlog.New(workqueue.NewTypedRateLimitingQueueWithConfig(c.limiter, cfg), bound, c.opts.Metrics.Workqueue.NewDepthMetric(cfg.Name))
	c.SetRules(ctx, fixture.Compile(t, setAB))
	// No worker runs yet: the initial list is all queued or waiting.
	testutil.WaitFor(t, 30*time.Second, "the initial list handled", func() bool { return c.queue.Len()+c.queue.Waiting() == objects })
	if c.queue.Len() != bound || c.queue.Waiting() != objects-bound {
		t.Fatalf("after the initial list: %d keys queued and %d waiting, want %d and %d", c.queue.Len(), c.queue.Waiting(), bound, objects-bound)
	}
	if _, depth := c.opts.Metrics.Activity.Read(); depth != objects {
		t.Errorf("workqueue_depth %d, want %d: the keys waiting count", depth, objects)
	}
	stop := runController(t, ctx, c)
	defer stop()
	testutil.WaitFor(t, 30*time.Second, "every object written", func() bool {
		return len(patches(client)) >= objects && c.queue.Waiting() == 0
	})
	if got := len(patches(client)); got != objects {
		t.Errorf("%d patches, want one per object (%d)", got, objects)
	}
}
