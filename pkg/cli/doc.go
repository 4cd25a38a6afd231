// Package cli implements the kube-annotator command line: one binary with
// subcommands, usable directly or as the kubectl plugin "kubectl annotator".
// Commands are spf13/cobra commands, as kubectl's are, on pflag flag sets.
//
// Start at Main (cli.go), which builds the command tree and prints every
// error in one place and format (errors.go). Each subcommand has its file:
// run.go fills an app.Config and calls app.Run; once.go, diff.go and
// explain.go load and compile the rules (rules.Load, resolve.Compile),
// list objects through package scan and decide through package reconcile,
// as run does; check.go, rbac.go and admission.go check a rules file or
// print what it needs, without writing. Connection flags come from package kubeflags.
//
// Layer "command" of deps_test.go. It parses flags and prints; the
// process it starts is wired by pkg/app, so it imports none of
// pkg/controller, pkg/reloader, pkg/shard or pkg/policysync.
package cli
