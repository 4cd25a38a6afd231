package controller

import (
	"context"
	"errors"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
)

// A watch ended by shutdown is neither logged as an error nor counted.
func TestWatchErrorOnShutdown(t *testing.T) {
	m := metrics.New()
	c := newController(newClient(), Options{Metrics: m})
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	c.watchErrorHandler(&informer.Informer{GVR: configMaps})(ctx, nil, context.Cause(ctx))
	if got := value(t, m.ListWatchErrors.WithLabelValues("configmaps", "Unknown")); got != 0 {
		t.Errorf("list_watch_errors_total{configmaps,Unknown} = %v after shutdown, want 0", got)
	}
}
