// Package progress tells where the benchmark is while it runs: Logf
// prints a line on stderr with the time since the benchmark started,
// Every reports every interval while something long runs, and Sleep
// waits unless the benchmark is interrupted.
//
// Layer "bench parts" of deps_test.go: it imports nothing of the module.
package progress
