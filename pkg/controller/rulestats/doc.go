// Package rulestats answers, for the per-rule gauges, how many objects
// each rule selects, would change in audit mode, leaves alone because it
// or its namespace opts out, and cannot compute a key on, by reason
// (rules.Unset), and on how many objects each rule's key is in each
// coverage state (reconcile.KeyState): counted per object, not per sync.
//
// Start at Stats: the controller calls Record with what a sync decided of
// one object (Of) and Forget when the object goes; an object synced again
// with the same verdict costs no allocation, and objects with the same
// verdict share one interned value. Record reports when what is unset on
// an object changed, so that the controller logs only then.
//
// Layer: run. It imports rules, reconcile and metrics, never the
// controller.
package rulestats
