package controller

import (
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kube-annotator/kube-annotator/pkg/controller/backlog"
	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// Writes fail without an answer, then the API server is back: the objects
// that waited for it are retried as soon as one write is answered, not
// when their wait ends, and their failures are logged in one line.
func TestRetryAfterOutage(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(t.Context(), logger)
	a, b, c := fixture.ConfigMap("ns", "a", nil), fixture.ConfigMap("ns", "b", nil), fixture.ConfigMap("ns", "c", nil)
	keyA, keyB, keyC := Key{configMaps, "ns", "a"}, Key{configMaps, "ns", "b"}, Key{configMaps, "ns", "c"}
	client := newClient(a, b, c)
	var down atomic.Bool
	down.Store(true)
	client.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			return true, nil, fixture.Refused
		}
		return false, nil, nil
	})
	ctl := withCache(t, client, Options{}, fixture.Compile(t, setAB), a, b, c)
	// Time stands still: only a release moves the objects' waits forward.
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	ctl.limiter = retry.NewLimiter[queued](clk, -1, 0)
	ctl.failures = retry.NewFailureLog(clk, retry.FailureLogInterval)
	ctl.queue.ShutDown()
	ctl.queue = backlog.New(workqueue.NewTypedRateLimitingQueueWithConfig(ctl.limiter, workqueue.TypedRateLimitingQueueConfig[queued]{Clock: clk}), maxQueued, nil)
	t.Cleanup(ctl.queue.ShutDown)

	ctl.queue.Add(keyA.queued())
	ctl.queue.Add(keyB.queued())
	ctl.processNextWorkItem(ctx)
	ctl.processNextWorkItem(ctx)
	if n := ctl.queue.Len(); n != 0 {
		t.Fatalf("%d objects ready after writes without an answer, want 0: they wait", n)
	}

	down.Store(false)
	ctl.queue.Add(keyC.queued())
	ctl.processNextWorkItem(ctx) // answered: a and b are released
	clk.Step(time.Millisecond)   // far less than their wait
	testutil.WaitFor(t, 10*time.Second, "a and b to be ready", func() bool { return ctl.queue.Len() == 2 })
	ctl.processNextWorkItem(ctx)
	ctl.processNextWorkItem(ctx)
	for _, k := range []Key{keyA, keyB, keyC} {
		if n := ctl.queue.NumRequeues(k.queued()); n != 0 {
			t.Errorf("NumRequeues(%s) = %d, want 0: written", k.Name, n)
		}
	}
	if got := len(patches(client)); got != 5 {
		t.Errorf("%d patches, want 5: a and b twice, c once", got)
	}
	errs := 0
	for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
		if e.Type == ktesting.LogError {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("%d error lines, want 1: the first failure; the second is counted", errs)
	}
}
