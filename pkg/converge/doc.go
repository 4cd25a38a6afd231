// Package converge does what `kube-annotator once` does: it converges
// every object of the rules' resources once, with workers in parallel,
// and prunes the recorded resources no rule names any more, counting what
// it did per resource.
//
// Start at Converger (converge.go): Converge lists one target's objects
// through package scan and sends each change through a reconcile.Writer,
// as run does; Prune converges the targets PruneTargets finds in the
// record. Tally (tally.go) counts one resource, PrintSummary prints them
// all, and Progress reports while it runs.
//
// Layer "verb" of deps_test.go. It parses no flag and imports nothing of
// pkg/cli or pkg/app.
package converge
