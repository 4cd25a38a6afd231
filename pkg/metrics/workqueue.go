package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// workqueueMetrics implements client-go's workqueue.MetricsProvider with the
// names controller-runtime uses, so that existing dashboards work.
type workqueueMetrics struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, workDuration      *prometheus.HistogramVec
	// queued counts the keys queued, besides depth (Activity).
	queued *atomic.Int64
}

func newWorkqueueMetrics(queued *atomic.Int64) *workqueueMetrics {
	const sub = "workqueue"
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 12)
	return &workqueueMetrics{
		queued: queued,
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: "depth",
			Help: "Current depth of the work queue."}, []string{"name"}),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "adds_total",
			Help: "Adds handled by the work queue."}, []string{"name"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: sub, Name: "queue_duration_seconds",
			Help: "How long an item stays in the work queue before being requested.", Buckets: buckets}, []string{"name"}),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: sub, Name: "work_duration_seconds",
			Help: "How long processing an item from the work queue takes.", Buckets: buckets}, []string{"name"}),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: "unfinished_work_seconds",
			Help: "Seconds of work in progress not yet observed by work_duration."}, []string{"name"}),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: "longest_running_processor_seconds",
			Help: "Seconds the longest running processor of the work queue has been running."}, []string{"name"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "retries_total",
			Help: "Retries handled by the work queue."}, []string{"name"}),
	}
}

func (w *workqueueMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{w.depth, w.adds, w.latency, w.workDuration, w.unfinished, w.longest, w.retries}
}

func (w *workqueueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return depthGauge{Gauge: w.depth.WithLabelValues(name), queued: w.queued}
}

func (w *workqueueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return w.adds.WithLabelValues(name)
}

func (w *workqueueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return w.latency.WithLabelValues(name)
}

func (w *workqueueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return w.workDuration.WithLabelValues(name)
}

func (w *workqueueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return w.unfinished.WithLabelValues(name)
}

func (w *workqueueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return w.longest.WithLabelValues(name)
}

func (w *workqueueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return w.retries.WithLabelValues(name)
}
