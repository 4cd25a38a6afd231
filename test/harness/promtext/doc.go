// Package promtext reads metrics in Prometheus' text format, as a
// process's /metrics serves them: MetricValue sums the samples of one
// metric whose labels match, Labels parses a sample's labels.
//
// Layer "test support" of deps_test.go, below test/harness: it imports
// nothing of the module; test/harness, test/harness/proc and test/bench
// read metrics through it.
package promtext
