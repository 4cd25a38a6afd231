package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/kube-annotator/kube-annotator/pkg/version"
)

func versionCommand(_ context.Context, e *env, args []string) error {
	fs := e.newFlagSet("version", "Print the version of kube-annotator.")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.Out, "kube-annotator %s (%s, %s/%s)\n", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
