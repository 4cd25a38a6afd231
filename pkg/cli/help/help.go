package help

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kube-annotator/kube-annotator/pkg/kubeflags"
)

// Text is a command's help text: synopsis, usage, subcommands, examples,
// its own flags, then the connection flags (kubeflags.Group), if it has
// any.
func Text(c *cobra.Command) string {
	own, conn := flagGroups(c)
	use := c.UseLine()
	if !own.HasFlags() && !conn.HasFlags() && !c.HasSubCommands() {
		use = strings.TrimSuffix(use, " [flags]")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nUsage:\n  %s\n", strings.TrimSpace(cmp.Or(c.Long, c.Short)), use)
	if subs := Subcommands(c); len(subs) > 0 {
		b.WriteString("\nCommands:\n")
		for _, s := range subs {
			fmt.Fprintf(&b, "  %-11s %s\n", s.Name(), s.Short)
		}
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "\nExamples:\n%s\n", strings.TrimRight(c.Example, "\n"))
	}
	if own.HasFlags() {
		fmt.Fprintf(&b, "\nFlags:\n%s", own.FlagUsages())
	}
	if conn.HasFlags() {
		b.WriteString("\nConnection flags, as kubectl's ('kubectl options' says what they mean):\n")
		b.WriteString(connectionFlagNames(conn))
	}
	if !c.HasParent() {
		p := c.CommandPath()
		fmt.Fprintf(&b, "\nRun '%s help COMMAND' or '%s COMMAND --help' for a command's flags;\n'%s --version' prints the version.\n", p, p, p)
	} else if len(Subcommands(c)) > 0 {
		fmt.Fprintf(&b, "\nRun '%s COMMAND --help' for a command's flags.\n", c.CommandPath())
	}
	return b.String()
}

// flagGroups are c's own flags and its connection flags, as its help
// lists them: neither help nor hidden ones.
func flagGroups(c *cobra.Command) (own, conn *pflag.FlagSet) {
	own, conn = pflag.NewFlagSet("own", pflag.ContinueOnError), pflag.NewFlagSet("conn", pflag.ContinueOnError)
	own.SortFlags, conn.SortFlags = false, false
	c.Flags().VisitAll(func(f *pflag.Flag) {
		switch _, ok := f.Annotations[kubeflags.Group]; {
		case f.Name == "help" || f.Hidden:
		case ok:
			conn.AddFlag(f)
		default:
			own.AddFlag(f)
		}
	})
	return own, conn
}

// Subcommands are the commands under c that its help lists: neither
// hidden nor help itself.
func Subcommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() && s.Name() != "help" {
			out = append(out, s)
		}
	}
	return out
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
