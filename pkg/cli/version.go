package cli

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/kube-annotator/kube-annotator/pkg/version"
)

func newVersionCommand(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Long:  "Print the version of kube-annotator.",
		Args:  noArgs,
		RunE:  func(*cobra.Command, []string) error { return printVersion(e.Out) },
	}
	newFlags(c)
	return c
}

// printVersion prints the version, the Go version and the platform.
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "kube-annotator %s (%s, %s/%s)\n", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
