// Package server serves the health probes and metrics endpoints.
//
// Start at Start (server.go), which listens and serves a handler until
// its context ends; Health answers /healthz and /readyz from a Check and
// the notes that say why the process is not ready, Metrics serves a
// Prometheus registry.
//
// Layer "base" of deps_test.go: it imports no other package of this
// module; what is ready is the caller's to say.
package server
