// Package testutil holds the small helpers that the tests of many
// packages share: WaitFor, which polls a condition until it holds,
// Consistently, which checks that one holds over a window, and MustJSON.
//
// Layer "base" of deps_test.go: it imports nothing of kube-annotator, so
// that any package's own tests may import it, and only tests do.
package testutil
