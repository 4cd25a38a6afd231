// Package diff answers what `kube-annotator diff` answers: which objects
// run would change, key by key, and how many each rule would change.
//
// Start at Changes (diff.go), which lists the objects of the targets
// through package scan and keeps those with something to change; Print
// writes them as text and Summary counts them rule by rule. Quoted is
// the one way a value, or its absence, is written in a diff.
//
// Layer "verb" of deps_test.go: it reads through package scan and
// decides through package reconcile, as run does, and writes nothing. It
// parses no flag and imports nothing of pkg/cli or pkg/app.
package diff
