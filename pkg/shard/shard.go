package shard

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
)

// Shard is this replica's share of the objects.
type Shard struct {
	mu      sync.Mutex
	ranges  Ranges
	metrics *Metrics
	logger  klog.Logger
	// probe lists whole objects of a resource, to learn whether the API
	// server applies shard selectors.
	probe func(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (runtime.Object, error)
}

// New returns the shard that owns rs, which must not be empty, reporting
// to m and logging to logger; members is the number of replicas the
// objects are split among. client asks the API server whether it applies
// shard selectors.
func New(logger klog.Logger, client dynamic.Interface, rs Ranges, members int, m *Metrics) *Shard {
	m.OwnedFraction.Set(rs.Fraction())
	m.Ranges.Set(float64(len(rs)))
	m.Members.Set(float64(members))
	m.ServingFraction.Set(rs.Fraction())
	probe := func(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (runtime.Object, error) {
		return client.Resource(gvr).Namespace(ns).List(ctx, opts)
	}
	return &Shard{ranges: rs, metrics: m, logger: logger, probe: probe}
}

// Ranges are the ranges the shard owns.
func (s *Shard) Ranges() Ranges {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ranges
}

// SetRanges makes rs, which must not be empty, the ranges of the
// informers made from now on; those made before keep theirs.
func (s *Shard) SetRanges(rs Ranges) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ranges = rs
}

const namespace = "kube_annotator_shard"

// Metrics report a replica's shard.
type Metrics struct {
	// OwnedFraction is the part of the hash space this replica owns.
	OwnedFraction prometheus.Gauge
	// Ranges is the number of ranges this replica owns.
	Ranges prometheus.Gauge
	// Members is the number of replicas the objects are split among.
	Members prometheus.Gauge
	// ServingFraction is the part of the hash space this replica caches
	// and writes: what it owns and, during a handoff, what it hands over.
	ServingFraction prometheus.Gauge
	// Reshards counts the times this replica rebuilt its informers on new
	// ranges.
	Reshards prometheus.Counter
	// Mode is 1 for the mode, server or client, that a resource's
	// informer runs in.
	Mode *prometheus.GaugeVec
	// Received counts objects the API server sent, in lists and watch
	// events, by resource.
	Received *prometheus.CounterVec
	// Dropped counts the objects of other shards that this replica
	// dropped itself, by resource.
	Dropped *prometheus.CounterVec
}

// NewMetrics returns the shard metrics, registered in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		OwnedFraction: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "owned_fraction",
			Help: "Part of the hash space of objects (FNV-1a 64 of metadata.uid) that this replica owns, from 0 to 1.",
		}),
		Ranges: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "ranges",
			Help: "Ranges of the hash space that this replica owns.",
		}),
		Members: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "members",
			Help: "Replicas the objects are split among.",
		}),
		ServingFraction: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "serving_fraction",
			Help: "Part of the hash space that this replica caches and writes: what it owns and, during a handoff, what it hands over.",
		}),
		Reshards: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "reshards_total",
			Help: "Times this replica rebuilt its informers on new ranges (dynamic sharding).",
		}),
		Mode: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "informer_mode",
			Help: "1 for the mode a resource's informer runs in: server (the API server applies the shard selector) or client (this replica drops other shards' objects).",
		}, []string{"resource", "mode"}),
		Received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "objects_received_total",
			Help: "Objects the API server sent in lists and watch events, by resource.",
		}, []string{"resource"}),
		Dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "objects_dropped_total",
			Help: "Objects of other shards that this replica dropped itself (client mode), by resource.",
		}, []string{"resource"}),
	}
	reg.MustRegister(m.OwnedFraction, m.Ranges, m.Members, m.ServingFraction, m.Reshards, m.Mode, m.Received, m.Dropped)
	return m
}
