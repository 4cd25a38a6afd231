package cli

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reloader"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/server"
	"github.com/kube-annotator/kube-annotator/pkg/version"
)

// runFlags are the flags of run, apart from the connection flags.
type runFlags struct {
	rules        string
	workers      int
	watchRules   bool
	metricsAddr  string
	probeAddr    string
	clusterFlags *clusterFlags
}

func runCommand(ctx context.Context, e *env, args []string) int {
	fs := e.newFlagSet("run", "Run the controller: watch every resource the rules name and keep each object annotated as they say.\n"+
		"The rules file is reloaded when it changes or on SIGHUP; an invalid file keeps the previous rules in force.")
	var f runFlags
	fs.StringVar(&f.rules, "rules", "rules.yaml", "Path to the rules file")
	fs.IntVar(&f.workers, "workers", 8, "Number of objects synced in parallel")
	fs.BoolVar(&f.watchRules, "watch-rules", true, "Reload the rules file when it changes (SIGHUP always reloads it)")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", "", "Address to serve Prometheus metrics on at /metrics, e.g. :8080 (default off)")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", "", "Address to serve /healthz and /readyz on, e.g. :8081 (default off)")
	f.clusterFlags = addClusterFlags(fs)
	addLogFlags(fs)
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if f.workers < 1 {
		fmt.Fprintf(e.Err, "%s run: --workers must be at least 1, got %d\n", e.prog, f.workers)
		return 2
	}
	logger := klog.Background().WithName("kube-annotator")
	ctx = klog.NewContext(ctx, logger)
	if err := run(ctx, f); err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	return 0
}

// run wires the rules, the reloader, the controller and the servers, and
// runs until ctx ends.
func run(ctx context.Context, f runFlags) error {
	logger := klog.FromContext(ctx)
	// The rules are checked before anything talks to the cluster.
	file, err := rules.Load(f.rules)
	if err != nil {
		return err
	}
	cfg, err := f.clusterFlags.restConfig()
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	resolver := resolve.New(dc)
	set, unresolved, err := rules.Compile(f.rules, file, resolver.Resolve)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	m := metrics.New()

	var rl *reloader.Reloader
	c := controller.NewController(dyn, controller.Options{
		Workers:      f.workers,
		Namespace:    f.clusterFlags.namespace(),
		ResourceGone: func(schema.GroupVersionResource) { rl.Resolve() },
	})
	rl = reloader.New(reloader.Options{
		Path:    f.rules,
		Resolve: resolver.Resolve,
		Reset:   resolver.Reset,
		Apply: func(s *rules.Set) {
			c.SetRules(ctx, s)
			m.Informers.Set(float64(c.Informers()))
		},
		Watch:   f.watchRules,
		Metrics: m,
	}, file, set, unresolved)
	for _, u := range unresolved {
		logger.Error(nil, "Resource not served; its rules are not enforced until it is", "field", u.Field, "reason", u.Message)
	}

	if f.metricsAddr != "" {
		if _, err := server.Start(ctx, "metrics", f.metricsAddr, server.Metrics(m.Registry)); err != nil {
			return err
		}
	}
	if f.probeAddr != "" {
		ready := func() error {
			if !c.HasSynced() {
				return errors.New("informers not synced")
			}
			return nil
		}
		if _, err := server.Start(ctx, "health probes", f.probeAddr, server.Health(ready)); err != nil {
			return err
		}
	}

	logger.Info("Starting", "version", version.Version, "server", cfg.Host, "rules", len(file.Rules), "resources", len(set.Targets))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.SetRules(ctx, set)
	m.Informers.Set(float64(c.Informers()))
	go func() {
		if err := rl.Run(ctx); err != nil {
			cancel(err) // e.g. the rules file cannot be watched: stop
		}
	}()
	if err := c.Run(ctx); err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
