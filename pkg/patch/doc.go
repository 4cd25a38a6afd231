// Package patch computes, without side effects, how an object's metadata
// must change to satisfy the rules — keys to set, and keys to delete because
// this controller set them (as the API server's managedFields record) and
// no rule wants them any more — and encodes that change as the requests
// that carry only the changed keys.
//
// Start at Plan (plan.go): from an object's annotations and labels, the
// keys its field manager owns (OwnedBy, owned.go) and what the rules want
// (Desired), it returns the Change to make; Requests (requests.go) turns a
// Change into the writes to send. PlanMarked (marker.go) counts as owned
// the keys an admission policy listed in the marker annotation MarkerKey
// names. Plan is fuzzed (FuzzPlan).
//
// Layer "base" of deps_test.go: it imports no other package of this
// module and no client; it never talks to the API server.
package patch
