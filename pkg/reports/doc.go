// Package reports keeps the OpenReports Report of each namespace, and the
// ClusterReport of cluster-scoped objects (openreports.io/v1alpha1), that
// run --reports writes: each holds the summary of the keys the rules set
// in its scope and the objects whose keys are not as the rules want, with
// the reason, capped in number.
//
// Start with Store, which the controller feeds one Verdict per object
// (Of builds it from a reconcile.Decision), then Writer, which writes the
// reports that changed at most every interval, through server-side apply,
// and deletes those with nothing left to report; Cleanup deletes them all
// when the option is off. api.go holds the few types of the API written.
//
// Layer: decide (deps_test.go).
package reports
