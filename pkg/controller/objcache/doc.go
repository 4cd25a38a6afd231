// Package objcache is what the controller's informers keep of each
// object, and how: the cache transforms of metadata informers (a
// read-only cached object with only the annotations and labels the rules
// read or the controller owns, values shared through an Interner) and of
// informers of whole objects, and the test of whether an update can change
// what the rules decide.
//
// Start at MetadataTransform and WholeObjectTransform (cache.go), which an
// informer is given, and Object, what they leave in the cache;
// NewProjecting keeps the keys a projection.Projection names and the field
// manager owns; RelevantUpdate decides whether an update is worth a sync.
//
// Layer "run" of deps_test.go: it imports rules, patch and reconcile, and
// nothing of the controller that uses it, so that it is tested alone.
package objcache
