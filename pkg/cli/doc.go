// Package cli implements the kube-annotator command line: one binary with
// subcommands, usable directly or as the kubectl plugin "kubectl annotator".
// Commands are spf13/cobra commands, as kubectl's are, on pflag flag sets.
//
// Start at Main (cli.go), which builds the command tree and prints every
// error in one place and format (errors.go); pkg/cli/logs sets up a
// command's logs, pkg/cli/help its help. Each subcommand has its file
// and, as kubectl's commands do, an options type (options.go): its flags,
// completed and validated once — the errors name the flags — then run.
// The flags most commands share are commonFlags (options.go) and the
// connection flags clusterFlags (cluster.go). What a command does beyond
// its flags and output lives below: run starts pkg/app, once converges
// through pkg/converge, diff, explain, coverage and check go through the
// packages of their names, and rbac and admission print what pkg/rbac
// and pkg/admission compute.
//
// Layer "command" of deps_test.go. It parses flags and prints; the
// process it starts is wired by pkg/app, so it imports none of
// pkg/controller, pkg/reloader, pkg/shard or pkg/policysync.
package cli
