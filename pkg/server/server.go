package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
)

// Check reports nil when healthy, or why not.
type Check func() error

// Health returns a handler serving /healthz (the process is alive) and
// /readyz (ready reports nil); when ready, /readyz also prints notes: one
// line each, after "ok", about what an operator should know but that does
// not make the process unready.
func Health(ready Check, notes func() []string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
		for _, n := range notes() {
			fmt.Fprintln(w, n)
		}
	})
	return mux
}

// Metrics returns a handler serving /metrics from registry.
func Metrics(registry *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{Registry: registry}))
	return mux
}

// Start listens on addr and serves h until ctx ends. It returns once the
// listener is open, so that a bad address fails the command at start.
func Start(ctx context.Context, name, addr string, h http.Handler) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %q: %w", name, addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	logger := klog.FromContext(ctx)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			logger.Error(err, "Server shutdown", "server", name)
		}
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(err, "Server failed", "server", name)
		}
	}()
	logger.Info("Serving", "server", name, "address", ln.Addr().String())
	return ln.Addr(), nil
}
