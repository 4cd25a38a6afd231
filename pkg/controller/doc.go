// Package controller runs the rules: one informer per ruled resource feeds
// one shared work queue, and workers patch, through the metadata client,
// the annotations and labels of objects that do not carry what the rules
// want. The informers are metadata informers (PartialObjectMetadata in
// protobuf), whose cache keeps only the annotations and labels the rules
// read or the controller owns (package objcache), unless a rule reads
// values from objects: then they are dynamic informers of whole objects.
//
// It follows the canonical client-go loop (k8s.io/sample-controller):
// NewController and Run (controller.go); event handlers only enqueue a
// comparable Key (key.go, informers.go); runWorker and
// processNextWorkItem take it; syncHandler (sync.go) reads the object from
// the informer's cache, asks reconcile.Decide what the rules want, and
// writes only when the object differs. Objects in the cache are shared and
// never modified. SetRules swaps the compiled rules in force. The objects
// rules read besides the object, one informer per source.Source,
// answer the source.Lookup each evaluation is given (sources.go).
//
// A resource that leaves the rules is pruned: the controller keeps
// watching it, with no rule, until the keys it set there are deleted, as
// long as its record lists the resource (prune.go). Each ruled or
// recorded resource has one state, with its phase, changed in one place
// (resources.go). Package informer builds and runs each informer, package
// expect remembers writes until their echo is cached, and failed syncs are
// spaced and logged by package retry.
//
// Layer "run" of deps_test.go: it imports rules, patch, reconcile, fight,
// metrics and its own subpackages, never pkg/app or pkg/cli; only pkg/app
// (and tests) import it.
package controller
