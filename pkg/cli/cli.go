// Package cli implements the kube-annotator command line: one binary with
// subcommands, usable directly or as the kubectl plugin "kubectl annotator".
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kube-annotator/kube-annotator/pkg/kubeflags"
)

// Streams are the standard streams a command uses.
type Streams struct {
	Out, Err io.Writer
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what every command gets: its name as invoked and its streams.
type env struct {
	prog string // "kube-annotator" or "kubectl annotator"
	Streams
}

func commands() []command {
	return []command{
		{"run", "Run the controller: keep every ruled object annotated", runCommand},
		{"once", "Converge every ruled object once, then exit", onceCommand},
		{"diff", "Show what run would change, without writing", diffCommand},
		{"explain", "Explain what the rules make of one object, and why", explainCommand},
		{"check", "Validate a rules file; resolve and check permissions on a cluster", checkCommand},
		{"rbac", "Print the least-privilege RBAC for a rules file", rbacCommand},
		{"admission", "Print admission policies that annotate objects as they are created", admissionCommand},
		{"version", "Print the version", versionCommand},
	}
}

// Main runs the command line args (args[0] is the program's path) and
// returns the process exit code: 0 success, 1 failure, 2 bad usage. Help
// goes to stdout, as kubectl's does.
func Main(ctx context.Context, args []string, streams Streams) int {
	e := &env{prog: progName(args[0]), Streams: streams}
	switch {
	case len(args) < 2:
		e.usage(e.Out)
		return 2
	case args[1] == "-h" || args[1] == "--help" || args[1] == "help" && len(args) == 2:
		e.usage(e.Out)
		return 0
	case args[1] == "help":
		// help CMD is CMD --help.
		args = []string{args[0], args[2], "--help"}
	case args[1] == "--version":
		args = []string{args[0], "version"}
	}
	for _, c := range commands() {
		if c.name == args[1] {
			return e.exit(c.name, c.run(ctx, e, args[2:]))
		}
	}
	fmt.Fprintf(e.Err, "%s: unknown command %q\n\n", e.prog, args[1])
	e.usage(e.Err)
	return 2
}

// progName is how the user invoked us: a binary named kubectl-annotator is
// run by kubectl as the plugin "kubectl annotator".
func progName(arg0 string) string {
	base := strings.TrimSuffix(filepath.Base(arg0), ".exe")
	if strings.HasPrefix(base, "kubectl-") {
		return "kubectl " + strings.ReplaceAll(strings.TrimPrefix(base, "kubectl-"), "_", "-")
	}
	return "kube-annotator"
}

func (e *env) usage(w io.Writer) {
	fmt.Fprintf(w, "%s keeps annotations on Kubernetes objects as a rules file says.\n\n", e.prog)
	fmt.Fprintf(w, "Usage:\n  %s COMMAND [flags]\n\nCommands:\n", e.prog)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun '%s help COMMAND' or '%s COMMAND --help' for a command's flags;\n'%s --version' prints the version.\n", e.prog, e.prog, e.prog)
}

// newFlagSet returns the flag set of a subcommand, which prints its help,
// on --help, to e.Out.
func (e *env) newFlagSet(name, synopsis string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(e.Err)
	fs.SortFlags = false
	fs.Usage = func() { fmt.Fprint(e.Out, e.help(fs, synopsis)) }
	return fs
}

// help is a command's help text: synopsis, usage, its own flags, then the
// connection flags, if it has any.
func (e *env) help(fs *pflag.FlagSet, synopsis string) string {
	own, conn := pflag.NewFlagSet("own", pflag.ContinueOnError), pflag.NewFlagSet("conn", pflag.ContinueOnError)
	own.SortFlags, conn.SortFlags = false, false
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[kubeflags.Group]; ok {
			conn.AddFlag(f)
		} else {
			own.AddFlag(f)
		}
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nUsage:\n  %s %s [flags]\n", synopsis, e.prog, fs.Name())
	if own.HasFlags() {
		fmt.Fprintf(&b, "\nFlags:\n%s", own.FlagUsages())
	}
	if conn.HasFlags() {
		b.WriteString("\nConnection flags, as kubectl's ('kubectl options' says what they mean):\n")
		b.WriteString(connectionFlagNames(conn))
	}
	return b.String()
}

// connectionFlagNames lists the connection flags by name, wrapped.
func connectionFlagNames(fs *pflag.FlagSet) string {
	var b strings.Builder
	line := " "
	fs.VisitAll(func(f *pflag.Flag) {
		n := " --" + f.Name
		if f.Shorthand != "" {
			n = " -" + f.Shorthand + "/--" + f.Name
		}
		if len(line)+len(n) > 80 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += n
	})
	b.WriteString(line + "\n")
	return b.String()
}

// parse parses args into fs. Its error is a usageError, or, after
// --help, errHelp.
func (e *env) parse(fs *pflag.FlagSet, args []string) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return errHelp
	case err != nil:
		return usageError{err}
	case fs.NArg() > 0:
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// addLogFlags adds klog's verbosity flags, -v and --vmodule, to fs.
func addLogFlags(fs *pflag.FlagSet) {
	for _, name := range []string{"v", "vmodule"} {
		f := pflag.PFlagFromGoFlag(klogFlags().Lookup(name))
		if name == "v" {
			f.Shorthand = "v"
		}
		fs.AddFlag(f)
	}
}
