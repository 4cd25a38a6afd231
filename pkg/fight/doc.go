// Package fight tells when the controller and other writers take turns
// changing one object — a GitOps tool's self-heal, a second annotator
// that reverts the keys the rules set, two of them in turn — and holds
// the controller's writes to that object back, exponentially, while they
// do. No check of the rules can see such a loop: the rules settle, the
// other writers do not.
//
// Start at Detector (fight.go). Writes are counted per key: a write counts
// for each key it sets to the value the write before set it to (or
// deletes again), whichever writer reverted the key. An object is in a
// fight when a write would be the (Writes+1)th within Window for one of
// its keys; its next write of a key fought over then waits BackoffBase
// after the last one, doubling up to BackoffMax, while writes of other
// keys go at once, until Quiet passes or each fought key gets another
// value. It keeps at most MaxKeys keys and MaxManagers other field
// managers per object. Fight and ParseNote (report.go) carry the managers
// into events and `explain`.
//
// What the detector keeps is small and only for objects written recently:
// a 64-bit fingerprint, a time and two hashes of the change per object
// for at most two Windows, and a small state for objects written again.
//
// Layer "rules" of deps_test.go: it imports only package patch of this
// module, and no client; the clock is passed in.
package fight
