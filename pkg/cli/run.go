package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
	shard        *shardFlags
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
	f.shard = addShardFlags(fs)
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
	if err := f.shard.validate(fs.Changed, f.leader); err != nil {
		return e.usageError(fs, err)
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

// run runs the controller until ctx ends (or leadership is lost).
func run(ctx context.Context, f runFlags) error {
	a, err := newApp(ctx, f)
	if err != nil {
		return err
	}
	defer a.stopEvents()
	return a.run(ctx)
}

// app is the controller process: the reloader that owns the rules in force,
// the controller that enforces them, and what reports on both.
type app struct {
	flags      runFlags
	cfg        *rest.Config
	metrics    *metrics.Metrics
	controller *controller.Controller
	reloader   *reloader.Reloader
	stopEvents func()
	// loaded describes the rules loaded at start, for the start log.
	loaded []any
	// leading says whether this replica leads, for the readiness probe.
	leading atomic.Bool
}

// newApp builds run's parts, each complete before the next receives it: the
// rules, loaded (before anything talks to the cluster) and compiled once;
// the clients; the trigger that has the rules resolved again; the
// controller, which pulls it when a resource stops being served; and the
// reloader, which owns the compiled rules and applies new ones to the
// controller.
func newApp(ctx context.Context, f runFlags) (*app, error) {
	file, err := rules.Load(f.rules)
	if err != nil {
		return nil, err
	}
	cfg, resolver, err := f.clusterFlags.resolver()
	if err != nil {
		return nil, err
	}
	compile := func(file *rules.File) (*rules.Set, []rules.FieldError, error) {
		return compileRules(f.rules, file, resolver.Resolve, f.clusterFlags.exclude)
	}
	set, unresolved, err := compile(file)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	metadataClient, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	m := metrics.New()
	recorder, stopEvents, err := eventRecorder(ctx, cfg, f.events)
	if err != nil {
		return nil, err
	}

	resolveAgain := reloader.NewTrigger()
	c := controller.NewController(dyn, metadataClient, controller.Options{
		Workers:      f.workers,
		ResyncPeriod: f.resync,
		Namespace:    f.clusterFlags.namespace(),
		ResourceGone: func(schema.GroupVersionResource) { resolveAgain.Resolve() },
		Metrics:      m,
		Recorder:     recorder,
		Shard:        f.shard.shardListWatch(klog.FromContext(ctx), dyn, m.Registry),
		ClientQPS:    cfg.QPS,
		ClientBurst:  cfg.Burst,
	})
	m.Registry.MustRegister(cachedObjectsGauge(c))
	rl := reloader.New(reloader.Options{
		Path:    f.rules,
		Compile: compile,
		Reset:   resolver.Reset,
		Apply:   c.SetRules,
		Trigger: resolveAgain,
		Watch:   f.watchRules,
		Metrics: m,
	}, file, set, unresolved)
	return &app{
		flags: f, cfg: cfg, metrics: m, controller: c, reloader: rl, stopEvents: stopEvents,
		loaded: []any{"rules", len(file.Rules), "resources", len(set.Targets)},
	}, nil
}

// run starts the servers, then enforces the rules while this replica leads.
func (a *app) run(ctx context.Context) error {
	if err := startServers(ctx, a.flags, a.metrics, a.ready); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting", append([]any{"version", version.Version, "server", a.cfg.Host}, a.loaded...)...)
	return a.flags.leader.withLeader(ctx, a.cfg, a.setLeading, a.lead)
}

// ready is the readiness check: the leader is ready once its informers
// have synced; a replica standing by is ready to take over.
func (a *app) ready() error {
	if a.leading.Load() && !a.controller.HasSynced() {
		return errors.New("informers not synced")
	}
	return nil
}

// setLeading records whether this replica leads.
func (a *app) setLeading(leading bool) {
	a.leading.Store(leading)
	if leading {
		a.metrics.Leader.Set(1)
	} else {
		a.metrics.Leader.Set(0)
	}
}

// lead runs the controller on the rules in force, and the reloader that
// keeps them up to date, until ctx ends or the reloader fails.
func (a *app) lead(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil)
	a.controller.SetRules(ctx, a.reloader.Set())
	wg.Go(func() {
		if err := a.reloader.Run(ctx); err != nil {
			cancel(err) // e.g. the rules file cannot be watched: stop
		}
	})
	if err := a.controller.Run(ctx); err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
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
