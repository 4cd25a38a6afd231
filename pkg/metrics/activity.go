package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// Activity counts, besides the series that export them, the objects the
// controller has decided and the keys its work queue holds: what tells a
// burst of work (a first convergence, a start's initial lists, a reload)
// from the quiet after it.
type Activity struct {
	decided atomic.Uint64
	queued  atomic.Int64
}

// Read returns the objects decided since the start — synced, or settled
// where their initial list delivered them (CountSync) — and the keys the
// work queue holds now.
func (a *Activity) Read() (decided uint64, queued int) {
	return a.decided.Load(), int(a.queued.Load())
}

// CountSync counts a sync of an object of resource, or an object settled
// as a sync would have left it, with its result: in kube_annotator_syncs_total
// and in m's Activity.
func (m *Metrics) CountSync(resource string, err error) {
	Count(m.Syncs, resource, err)
	m.Activity.decided.Add(1)
}

// depthGauge is the work queue's depth, exported and counted in an
// Activity.
type depthGauge struct {
	prometheus.Gauge
	queued *atomic.Int64
}

var _ workqueue.GaugeMetric = depthGauge{}

func (g depthGauge) Inc() { g.Gauge.Inc(); g.queued.Add(1) }
func (g depthGauge) Dec() { g.Gauge.Dec(); g.queued.Add(-1) }
