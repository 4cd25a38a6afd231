// Package explain answers what `kube-annotator explain` answers of one
// object: every rule of its resource and whether it selects the object
// (if not, why), the keys each wants and who owns them, conflicts, the
// last fight the controller reported over it, and what run would change.
//
// Start at Objects (explain.go), which reads the object and decides
// through package reconcile, as run does; Print (print.go) writes an
// Object as text, and its fields are what -o json and -o yaml print.
// FightOf (fight.go) reads the controller's fight events.
//
// Layer "verb" of deps_test.go: it reads objects and events and writes
// nothing. It parses no flag and imports nothing of pkg/cli or pkg/app.
package explain
