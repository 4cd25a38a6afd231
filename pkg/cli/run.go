package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reloader"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/server"
	"github.com/kube-annotator/kube-annotator/pkg/version"
)

// defaultGCPercent is the garbage collector's GOGC for run when the
// environment sets none. The controller's live heap is mostly its cache:
// long-lived and small. Collecting once the heap has grown by half of it,
// rather than by all of it (Go's default), costs little CPU on so small a
// heap and keeps the peak RSS closer to the live heap through the bursts
// of garbage that the initial sync and convergence make.
const defaultGCPercent = 50

// tuneGC sets GOGC to defaultGCPercent unless the environment, read
// through lookupEnv, sets it.
func tuneGC(lookupEnv func(string) (string, bool)) {
	if _, set := lookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// runFlags are the flags of run.
type runFlags struct {
	rules        string
	workers      int
	resync       time.Duration
	watchRules   bool
	events       bool
	metricsAddr  string
	probeAddr    string
	clusterFlags *clusterFlags
	leader       *leaderFlags
}

func runCommand(ctx context.Context, e *env, args []string) int {
	fs := e.newFlagSet("run", "Run the controller: watch every resource the rules name and keep each object annotated as they say.\n"+
		"The rules file is reloaded when it changes or on SIGHUP; an invalid file keeps the previous rules in force.")
	var f runFlags
	fs.StringVar(&f.rules, "rules", "rules.yaml", "Path to the rules file")
	fs.IntVar(&f.workers, "workers", 8, "Number of objects synced in parallel")
	fs.DurationVar(&f.resync, "resync-period", 0, "How often every cached object is synced again although nothing changed, e.g. 10h (0: never; events alone keep objects converged)")
	fs.BoolVar(&f.watchRules, "watch-rules", true, "Reload the rules file when it changes (SIGHUP always reloads it)")
	fs.BoolVar(&f.events, "events", false, "Record a Normal event on every object changed and a Warning event when a change is rejected")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", "", "Address to serve Prometheus metrics on at /metrics, e.g. :8080 (default off)")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", "", "Address to serve /healthz and /readyz on, e.g. :8081 (default off)")
	f.leader = addLeaderFlags(fs)
	f.clusterFlags = addClusterFlags(fs)
	f.clusterFlags.addExcludeFlag(fs)
	addLogFlags(fs)
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if f.workers < 1 {
		return e.usageError(fs, fmt.Errorf("--workers must be at least 1, got %d", f.workers))
	}
	if f.resync < 0 {
		return e.usageError(fs, fmt.Errorf("--resync-period must not be negative, got %v", f.resync))
	}
	logger := klog.Background().WithName("kube-annotator")
	ctx = klog.NewContext(ctx, logger)
	tuneGC(os.LookupEnv)
	if err := run(ctx, f); err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	return 0
}

// run wires the rules, the reloader, the controller and the servers, and
// runs until ctx ends (or leadership is lost).
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
	if err := set.ExcludeNamespaces(f.clusterFlags.exclude); err != nil {
		return fmt.Errorf("--exclude-namespaces: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	metadataClient, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	m := metrics.New()
	recorder, stopEvents, err := eventRecorder(ctx, cfg, f.events)
	if err != nil {
		return err
	}
	defer stopEvents()

	var rl *reloader.Reloader
	c := controller.NewController(dyn, metadataClient, controller.Options{
		Workers:      f.workers,
		ResyncPeriod: f.resync,
		Namespace:    f.clusterFlags.namespace(),
		ResourceGone: func(schema.GroupVersionResource) { rl.Resolve() },
		Metrics:      m,
		Recorder:     recorder,
	})
	rl = reloader.New(reloader.Options{
		Path:              f.rules,
		Resolve:           resolver.Resolve,
		Reset:             resolver.Reset,
		Apply:             c.SetRules,
		Watch:             f.watchRules,
		Metrics:           m,
		ExcludeNamespaces: f.clusterFlags.exclude,
	}, file, set, unresolved)
	for _, u := range unresolved {
		logger.Error(nil, "Resource not served; its rules are not enforced until it is", "field", u.Field, "reason", u.Message)
	}

	var leading atomic.Bool
	if err := startServers(ctx, f, m, func() error {
		if leading.Load() && !c.HasSynced() {
			return errors.New("informers not synced")
		}
		return nil // a replica standing by is ready to take over
	}); err != nil {
		return err
	}

	logger.Info("Starting", "version", version.Version, "server", cfg.Host, "rules", len(file.Rules), "resources", len(set.Targets))
	onLeading := func(l bool) {
		leading.Store(l)
		if l {
			m.Leader.Set(1)
		} else {
			m.Leader.Set(0)
		}
	}
	return f.leader.withLeader(ctx, cfg, onLeading, func(ctx context.Context) error {
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		c.SetRules(ctx, rl.Set())
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
	})
}

// startServers starts the metrics and probe servers that are configured.
func startServers(ctx context.Context, f runFlags, m *metrics.Metrics, ready server.Check) error {
	if f.metricsAddr != "" {
		if _, err := server.Start(ctx, "metrics", f.metricsAddr, server.Metrics(m.Registry)); err != nil {
			return err
		}
	}
	if f.probeAddr != "" {
		if _, err := server.Start(ctx, "health probes", f.probeAddr, server.Health(ready)); err != nil {
			return err
		}
	}
	return nil
}

// eventRecorder returns an events/v1 recorder when enabled, else nil, and
// a func that flushes and stops it.
func eventRecorder(ctx context.Context, cfg *rest.Config, enabled bool) (events.EventRecorder, func(), error) {
	if !enabled {
		return nil, func() {}, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		return nil, nil, err
	}
	return b.NewRecorder(scheme.Scheme, "kube-annotator"), b.Shutdown, nil
}
