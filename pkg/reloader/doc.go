// Package reloader keeps the rules in force up to date while the controller
// runs: it reloads the rules file when it changes (or on SIGHUP), and
// resolves the rules' resources again when the cluster's resources change,
// so that a CRD installed after start is picked up and a deleted one is
// dropped. An invalid file never replaces the last good rules, and neither
// does a file compiled while the API server could not be asked.
//
// Start at New and Reloader.Run (reloader.go). Only events that concern
// the rules file reload it (watch.go); the file's state — in force, held,
// invalid or waiting — is one value that setState changes, and the
// metrics and Note follow (state.go). A Guard (guard.go) holds a reload
// that changes too much until SIGHUP. A rules-file field takes the path
// rules.Load → resolve.Compile → Options.Apply, which pkg/app points at
// the controller's SetRules.
//
// Layer "run" of deps_test.go: it imports rules, resolve and metrics,
// never the controller it feeds; only pkg/app imports it.
package reloader
