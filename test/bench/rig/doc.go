// Package rig is what every measurement of the benchmark stands on. A
// Bench holds the control plane, the benchmark's own clients and watch,
// the shape and number of the objects seeded so far, and the Options the
// command line set; it starts the runners (Runner, NewRunners,
// Bench.Start), seeds and resets the objects (Seed, Reset), and counts
// what the control plane served meanwhile: requests (OpenWindow, Window)
// and CPU (ControlPlaneCPU, StartProfile).
//
// Layer "bench rig" of deps_test.go: it imports the benchmark's parts
// and test/harness, and none of the measurements above it.
package rig
