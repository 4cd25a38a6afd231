// Package rounds measures the runners against each other: Measure runs
// one runner from reset objects until every object is annotated, then,
// for a controller, through a window of steady state and a restart; Runs
// holds every run of every round and prints the medians per runner, what
// the control plane spent on each, and every run.
//
// Layer "bench phases" of deps_test.go: it imports test/bench/rig and
// the benchmark's parts.
package rounds
