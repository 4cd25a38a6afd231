// Package preview counts what putting a set of rules in force would
// change, from objects already cached: the Preview the --max-changes hold
// reads, and the per-namespace count of a tenant's maxChanges hold.
//
// Start at Preview: the controller walks its caches, one target and its
// objects at a time, into Count or CountChanged, which decide each object
// as a sync would (reconcile.Decide) and write nothing.
//
// Layer "run" of deps_test.go: it imports reconcile, rules and objcache,
// and no client.
package preview
