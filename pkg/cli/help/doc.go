// Package help writes a command's help as kube-annotator prints it, for
// any spf13/cobra command: synopsis, usage, subcommands, examples, its
// own flags, then the connection flags by name only, as kubectl's help
// points to 'kubectl options' (kubectl keeps its help templates apart from
// its commands too, in pkg/util/templates).
//
// Start at Text (help.go); NewCommand (command.go) is the help command
// that prints it. Layer "command" of deps_test.go: it imports only
// kubeflags of this module, for the mark of the connection flags, and
// nothing of pkg/cli, which imports it.
package help
