package cli

import (
	"context"
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
	o := &versionOptions{env: e}
	o.addOutput(c)
	c.RunE = e.runE(o)
	return c
}

// versionOptions are version's flags.
type versionOptions struct {
	*env
	commonFlags
}

func (o *versionOptions) complete(*cobra.Command, []string) error { return nil }
func (o *versionOptions) validate() error                         { return o.commonFlags.validate() }
func (o *versionOptions) run(context.Context) error               { return printVersion(o.env, o.output) }

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
