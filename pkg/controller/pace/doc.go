// Package pace gives each tenant's rules their share of the controller's
// writes: a write that changes a key of a tenant's rule waits its turn in
// that tenant's token bucket (the tenants section's writesPerSecond), so
// that one tenant's rule over thousands of objects never holds back the
// admin's rules or another tenant's.
//
// Start at Pacer.Wait, asked by a worker before it writes: 0 writes now;
// a duration has the worker put the object back in the queue for that
// long (the queue's AddAfter), so that it waits outside the queue and
// the workers go on with other objects. The turn is reserved when the
// wait is given, so that an object that waited writes when it comes back.
//
// Layer "run" of deps_test.go: it imports package reconcile, for the
// rules a decision's changes come from, and no client.
package pace
