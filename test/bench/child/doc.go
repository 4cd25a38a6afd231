// Package child runs the programs the benchmark measures as child
// processes and reads what they use. Start returns a Process: its log,
// whether it is alive, Stop (SIGTERM, then SIGKILL), its CPU time and
// its RSS, peak and current, from /proc. A Process's own endpoints tell
// the rest: WaitReady polls its readiness probe, MinHeap samples its Go
// heap from its metrics, FreeAddrs gives it loopback ports to serve on.
//
// Layer "bench parts" of deps_test.go: of the module, it imports
// test/harness/proc and test/harness/promtext.
package child
