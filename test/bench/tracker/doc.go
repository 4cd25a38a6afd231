// Package tracker is the benchmark's own watch of the objects: a
// metadata informer per resource, started once, that knows of every
// object whether it carries the annotation, and when the first and the
// last became annotated. After its initial list it only watches, so that
// it adds no GET or LIST to what the runners are measured by.
//
// Start at Start; WaitFor waits until the counts hold a condition (Is),
// Expect tells when one object is seen annotated.
//
// Layer "bench parts" of deps_test.go: of the module, it imports
// test/bench/workload and test/harness.
package tracker
