// Package app builds and runs the controller process of `kube-annotator
// run` from one Config: the clients, the rules loaded and compiled once,
// the record of the resources written to, the controller, the reloader
// that keeps its rules current, admission-policy sync, leader election,
// shard membership and the metrics and probe servers.
//
// Start at Run (app.go): newApp constructs each part in order, complete
// before the next receives it, and run starts them; Config (config.go) is
// what the command line fills, completes and validates (pkg/cli). A
// rules-file field enters here as Config's rules path: rules.Load, then
// resolve.Compile against discovery, then the controller's SetRules; on a
// change the reloader does the same and calls SetRules again. gc.go sets
// the garbage collector's targets; release.go gives a burst's memory back
// to the operating system once the burst ends.
//
// Layer "process" of deps_test.go: the one package that wires
// pkg/controller, pkg/reloader, pkg/shard and pkg/policysync together.
// It imports nothing of the command line (pkg/cli) and names no flag.
package app
