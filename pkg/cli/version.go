package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kube-annotator/kube-annotator/pkg/version"
)

func newVersionCommand(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Long:  "Print the version, git commit, build date and Go version of kube-annotator.",
		Args:  noArgs,
	}
	output := addOutputFlag(c)
	c.RunE = func(*cobra.Command, []string) error {
		if err := validateOutput(*output); err != nil {
			return usageError{err}
		}
		return printVersion(e, *output)
	}
	return c
}

// printVersion prints the version, commit, build date, Go version and
// platform, as text or as output (json or yaml) says.
func printVersion(e *env, output string) error {
	info := version.Get()
	if output != "" {
		return encode(e.Out, output, info)
	}
	_, err := fmt.Fprintln(e.Out, info)
	return err
}
