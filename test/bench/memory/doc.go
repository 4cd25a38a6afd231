// Package memory measures kube-annotator at rest: Measure starts it
// fresh on converged objects and reads its heap (also with GOGC low,
// close to the live heap), its RSS, the time until its informers synced
// and, when asked, the create→annotated latency of new objects and the
// time a reload that rebuilds every cache takes. MeasureWhen measures it
// again with a when: condition on Deployments, whose informer then
// caches more than metadata. Print and PrintLatency write the tables.
//
// Layer "bench phases" of deps_test.go: it imports test/bench/rig and
// the benchmark's parts.
package memory
