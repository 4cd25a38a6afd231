package shard

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
)

// Shard is this replica's share of the objects.
type Shard struct {
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
	probe := func(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (runtime.Object, error) {
		return client.Resource(gvr).Namespace(ns).List(ctx, opts)
	}
	return &Shard{ranges: rs, metrics: m, logger: logger, probe: probe}
}

// Ranges are the ranges the shard owns.
func (s *Shard) Ranges() Ranges { return s.ranges }

const namespace = "kube_annotator_shard"

// Metrics report a replica's shard.
type Metrics struct {
	// OwnedFraction is the part of the hash space this replica owns.
	OwnedFraction prometheus.Gauge
	// Ranges is the number of ranges this replica owns.
	Ranges prometheus.Gauge
	// Members is the number of replicas the objects are split among.
	Members prometheus.Gauge
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
	reg.MustRegister(m.OwnedFraction, m.Ranges, m.Members, m.Mode, m.Received, m.Dropped)
	return m
}
