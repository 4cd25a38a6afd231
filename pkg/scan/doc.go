// Package scan lists every object of the ruled resources once and reports,
// as package reconcile decides it, which annotations and labels each must
// change: the one-shot counterpart of the controller's informers, used by
// `once` and `diff`. It never writes.
//
// Start at Resource (scan.go), which pages through one rules.Target's
// objects and calls Visit with each Object and its changes. Sources and
// SourcesOf (related.go) list the related objects once — namespaces,
// nodes — and answer the source.Lookup each evaluation is given, as the
// controller's informers do for `run`.
//
// Layer "decide" of deps_test.go: it imports rules, reconcile and patch,
// and of client-go only the dynamic client; no informer.
package scan
