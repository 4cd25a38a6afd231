package cli

import (
	"context"
	"fmt"

	"github.com/kube-annotator/kube-annotator/pkg/version"
)

func versionCommand(_ context.Context, e *env, args []string) error {
	fs := e.newFlagSet("version", "Print the version, git commit, build date and Go version of kube-annotator.")
	output := fs.StringP("output", "o", "", "Output format: \"\" (text), json or yaml")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *output != "" && *output != "json" && *output != "yaml" {
		return usageErrorf("--output must be json or yaml, got %q", *output)
	}
	info := version.Get()
	if *output != "" {
		return encode(e.Out, *output, info)
	}
	fmt.Fprintln(e.Out, info)
	return nil
}
