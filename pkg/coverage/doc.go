// Package coverage answers what `kube-annotator coverage` answers: on how
// many objects each rule's annotation or label key is in each state —
// compliant, pending, foreign, source-missing, invalid, error, opted-out
// or fighting (reconcile.States) — and which objects are in a state, with
// the reason explain gives.
//
// Start at Scan (coverage.go), which lists the objects of the targets
// through package scan and gives each key its state through
// reconcile.Decision.Coverage, the code the controller's gauge
// kube_annotator_rule_coverage_objects counts with; Print (print.go)
// writes a Report as text, and its fields are what -o json and -o yaml
// print.
//
// Layer "verb" of deps_test.go: it reads through package scan and writes
// nothing. It parses no flag and imports nothing of pkg/cli or pkg/app.
package coverage
