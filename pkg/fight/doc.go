// Package fight tells when the controller and another writer take turns
// changing one object — a GitOps tool's self-heal, a second annotator
// that reverts the keys the rules set — and holds the controller's writes
// to that object back, exponentially, while they do. No check of the
// rules can see such a loop: the rules settle, the other writer does not.
//
// Start at Detector (fight.go). Only writes that make the same change as
// the write before them (ChangeOf, change.go) count: that is what a revert
// loop looks like. An object is in a fight when such a write would be the
// (Writes+1)th within Window; its next write then waits BackoffBase after
// the last one, doubling up to BackoffMax, until Quiet passes without a
// write or a write makes another change. Fight and ParseNote (report.go)
// carry the other field manager into events and `explain`.
//
// What the detector keeps is tiny and only for objects written recently:
// a 64-bit fingerprint, a time and a hash of the change per object for at
// most two Windows, and a small state for objects written twice.
//
// Layer "rules" of deps_test.go: it imports only package patch of this
// module, and no client; the clock is passed in.
package fight
