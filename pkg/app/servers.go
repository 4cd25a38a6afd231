package app

import (
	"context"
	"net/http"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"

	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/server"
)

// startServers starts the metrics and probe servers that cfg configures.
func startServers(ctx context.Context, cfg Config, m *metrics.Metrics, health http.Handler) error {
	if cfg.MetricsAddr != "" {
		if _, err := server.Start(ctx, "metrics", cfg.MetricsAddr, server.Metrics(m.Registry)); err != nil {
			return err
		}
	}
	if cfg.ProbeAddr != "" {
		if _, err := server.Start(ctx, "health probes", cfg.ProbeAddr, health); err != nil {
			return err
		}
	}
	return nil
}

// eventRecorder returns an events/v1 recorder writing through cs when
// enabled, else nil, and a func that flushes and stops it.
func eventRecorder(ctx context.Context, cs kubernetes.Interface, enabled bool) (events.EventRecorder, func(), error) {
	if !enabled {
		return nil, func() {}, nil
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		return nil, nil, err
	}
	return b.NewRecorder(scheme.Scheme, "kube-annotator"), b.Shutdown, nil
}
