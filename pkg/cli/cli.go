package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/cli/help"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Streams are the standard streams a command uses.
type Streams struct {
	Out, Err io.Writer
}

// env is what every command gets: the program's name as invoked and its
// streams.
type env struct {
	prog string // "kube-annotator" or "kubectl annotator"
	Streams
	// ran is set when a command's own code starts: an error before it is
	// cobra's finding the command, parsing its flags or checking its
	// arguments, a usage error.
	ran bool
}

// Main runs the command line args (args[0] is the program's path) and
// returns the process exit code: 0 success, 1 failure, 2 bad usage. Help
// goes to stdout, as kubectl's does; errors go to stderr in one format.
func Main(ctx context.Context, args []string, streams Streams) int {
	e := &env{prog: progName(args[0]), Streams: streams}
	root := e.newRootCommand()
	root.SetArgs(append([]string{}, args[1:]...)) // never nil: cobra would read os.Args
	cmd, err := root.ExecuteContextC(ctx)
	return e.exit(cmd, err)
}

// Commands are listed in help in the order they are added: from the one
// that runs the controller to the one that prints the version.
func init() { cobra.EnableCommandSorting = false }

// progName is how the user invoked us: a binary named kubectl-annotator is
// run by kubectl as the plugin "kubectl annotator".
func progName(arg0 string) string {
	base := strings.TrimSuffix(filepath.Base(arg0), ".exe")
	if strings.HasPrefix(base, "kubectl-") {
		return "kubectl " + strings.ReplaceAll(strings.TrimPrefix(base, "kubectl-"), "_", "-")
	}
	return "kube-annotator"
}

// newRootCommand returns the command tree: the root, which only names the
// subcommands, and every subcommand, with cobra's completion and help.
func (e *env) newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:         "kube-annotator COMMAND [flags]",
		Long:        "kube-annotator keeps annotations on Kubernetes objects as a rules file says.",
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: e.prog},
		// Main prints every error, in one format.
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          unknownCommand,
		// Suggest "once" for "onec".
		SuggestionsMinimumDistance: 2,
	}
	version := root.Flags().Bool("version", false, "Print the version")
	_ = root.Flags().MarkHidden("version") // the help's last line says it
	root.RunE = func(c *cobra.Command, _ []string) error {
		if *version {
			return printVersion(e, "")
		}
		e.printHelp(c)
		return exitCode(2) // no command
	}
	root.SetOut(e.Out)
	root.SetErr(e.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetHelpFunc(func(c *cobra.Command, _ []string) { e.printHelp(c) })
	root.SetHelpCommand(help.NewCommand(e.printHelp, unknownCommand))
	root.AddCommand(
		e.newRunCommand(), e.newOnceCommand(), e.newDiffCommand(), e.newExplainCommand(), e.newCoverageCommand(),
		e.newCheckCommand(), e.newRBACCommand(), e.newAdmissionCommand(), newVersionCommand(e),
	)
	e.addCompletionCommand(root)
	root.InitDefaultHelpCmd()
	e.markRuns(root)
	return root
}

// unknownCommand is the root's argument check: any argument is a command
// that does not exist.
func unknownCommand(root *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], root.CommandPath())
	if s := root.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return usageErrorf("%s", msg)
}

// noArgs is the argument check of a command that takes none.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("unexpected argument %q", args[0])
	}
	return nil
}

// printHelp prints c's help to stdout.
func (e *env) printHelp(c *cobra.Command) {
	fmt.Fprint(e.Out, help.Text(c))
}

// markRuns makes every command of the tree under c set e.ran when its own
// code starts.
func (e *env) markRuns(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(c *cobra.Command, args []string) error {
			e.ran = true
			return run(c, args)
		}
	} else if run := c.Run; run != nil {
		c.Run = func(c *cobra.Command, args []string) {
			e.ran = true
			run(c, args)
		}
	}
	for _, sub := range c.Commands() {
		e.markRuns(sub)
	}
}

// newFlags returns c's flag set, listed in help in the order the flags
// are added.
func newFlags(c *cobra.Command) *pflag.FlagSet {
	fs := c.Flags()
	fs.SortFlags = false
	return fs
}

// defaultRules is --rules' default.
const defaultRules = "rules.yaml"
