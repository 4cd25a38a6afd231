// Package policysync keeps a field manager's admission policies in the
// cluster equal to what the rules in force translate into (see package
// admission): it creates and updates them with server-side apply and
// deletes those no rule asks for any more. It touches only the
// MutatingAdmissionPolicies and bindings labelled as managed by
// kube-annotator for its field manager.
//
// Start at New and Syncer.Sync (policysync.go); Wrap puts a sync in front
// of each rules change the reloader applies, Run syncs again every
// Interval, and State says what the last sync found, for metrics and
// /readyz.
//
// Layer "run" of deps_test.go: it imports admission and rules; only
// pkg/app imports it.
package policysync
