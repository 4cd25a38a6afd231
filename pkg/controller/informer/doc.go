// Package informer builds and runs the controller's informers, one per
// resource: a metadata informer (PartialObjectMetadata in protobuf) whose
// cache keeps what a projection.Projection names, or a dynamic informer of
// whole objects when the rules read them, each with its cache transform
// (package objcache), its list and watch retried and, when asked, sharded,
// and the indexes by the objects of each source.Source its objects name.
//
// Start at Builder.Build, which returns an Informer not yet running; Run
// and Stop bound its life; Serves, Widen and ServesAll tell whether its
// cache keeps what a target's rules need. SourceIndexers and StoreKey are
// the indexes by source and the keys they hold (index.go).
//
// Layer "run" of deps_test.go: it imports rules, the source table, objcache
// and retry, never the controller that uses it: event handlers and watch
// error handlers are the caller's.
package informer
