// Package soak is the chaos soak: every fault of the suite at once over
// 10,000 objects, on a control plane of its own (see docs/faults.md).
// `make soak` runs it alone; `make test-faults` runs it after the faults
// of test/e2e.
//
// Start at TestSoakChaos (soak_test.go), which seeds the objects, runs the
// chaos schedule of soak_chaos_test.go (KUBE_ANNOTATOR_SOAK_SEED replays
// one) and checks, once settled, every object and the writes the API
// server's audit log shows.
//
// Layer "test" of deps_test.go; it has no code but its tests.
package soak
