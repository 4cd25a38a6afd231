// Package projection says what a cache must keep of a resource's objects so that
// the rules decide on what it keeps as on the whole objects: a
// Projection, which pkg/rules computes for each resource from its rules
// (rules.Target.Projection) and the controller's caches keep
// (pkg/controller/objcache), and whether a cache built for one serves
// another (Covers).
//
// Layer "rules" of deps_test.go: it imports nothing of kube-annotator.
package projection
