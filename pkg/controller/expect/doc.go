// Package expect remembers the controller's own writes until their echo
// reaches the informer's cache: a sync that finds the object still at the
// resourceVersion it patched from would repeat the write, so it waits for
// the newer version instead (or for TTL, in case the echo never comes).
// The echo itself needs no sync when the write was inert: it changed only
// keys the rules set and none of them reads (inert.go), and the echo
// differs from the version the write was decided on by exactly what the
// write changed (digest.go): a merge patch applies to the object as the
// API server has it, which may be newer than the cache.
//
// Start at Echoes: the controller calls Record after a write, with what
// Inert says of it, Pending before a sync, Echo for an update event (true:
// drop it), Forget when the object goes and ForgetResource when its
// informer stops; Waiting tells a prune whether a write to a resource
// awaits its echo.
//
// Layer "run" of deps_test.go: it imports rules, rules/source and patch,
// never the controller that uses it.
package expect
