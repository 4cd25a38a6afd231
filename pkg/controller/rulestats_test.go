package controller

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
)

// BenchmarkQueueHeap reports the heap the work queue keeps per object
// once it has held every object at once, as after an initial sync, and
// was drained: its maps do not shrink.
func BenchmarkQueueHeap(b *testing.B) {
	const n = 100000
	for b.Loop() {
		before := fixture.LiveHeap()
		q := workqueue.NewTypedRateLimitingQueueWithConfig(retry.NewLimiter[queued](clock.RealClock{}, -1, 0),
			workqueue.TypedRateLimitingQueueConfig[queued]{Name: "bench", MetricsProvider: metrics.New().Workqueue})
		names := make([]string, n)
		for i := range n {
			names[i] = fmt.Sprintf("object-%06d", i)
			q.Add(Key{configMaps, "ns", names[i]}.queued())
		}
		for range n {
			k, _ := q.Get()
			q.Done(k)
			q.Forget(k)
		}
		b.ReportMetric(float64(fixture.LiveHeap()-before)/n, "B/object")
		runtime.KeepAlive(names)
		q.ShutDown()
	}
}
