package cli

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/version"
)

func runCommand(ctx context.Context, e *env, args []string) int {
	fs := e.newFlagSet("run", "Run the controller: watch every resource the rules name and keep each object annotated as they say.")
	rulesPath := fs.String("rules", "rules.yaml", "Path to the rules file")
	workers := fs.Int("workers", 8, "Number of objects synced in parallel")
	cf := addClusterFlags(fs)
	addLogFlags(fs)
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if *workers < 1 {
		fmt.Fprintf(e.Err, "%s run: --workers must be at least 1, got %d\n", e.prog, *workers)
		return 2
	}
	logger := klog.Background().WithName("kube-annotator")
	ctx = klog.NewContext(ctx, logger)

	s, err := connect(*rulesPath, cf)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	s.logUnresolved(ctx)
	logger.Info("Starting", "version", version.Version, "server", s.cfg.Host, "rules", len(s.file.Rules), "resources", len(s.set.Targets))
	c := controller.NewController(s.dynamic, controller.Options{Workers: *workers, Namespace: cf.namespace()})
	if err := c.Run(ctx, s.set); err != nil {
		logger.Error(err, "Controller failed")
		return 1
	}
	return 0
}
