// Package table writes the benchmark's figures in its markdown tables:
// a number or n/a (Num), a ratio (Ratio), MiB and milliseconds, a target
// met or not; and summarises them: Median, Percentile, Sum.
//
// Layer "bench parts" of deps_test.go: it imports nothing of the module.
package table
