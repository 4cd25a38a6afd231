package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	"github.com/kube-annotator/kube-annotator/pkg/policysync"
	"github.com/kube-annotator/kube-annotator/pkg/record"
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
	record       *recordFlags
	clusterFlags *clusterFlags
	leader       *leaderFlags
	shard        *shardFlags
	maxChanges   int
	// admissionPolicies keeps admission policies in sync with the rules.
	admissionPolicies bool
}

func runCommand(ctx context.Context, e *env, args []string) int {
	fs := e.newFlagSet("run", "Run the controller: watch every resource the rules name and keep each object annotated as they say.\n"+
		"The rules file is reloaded when it changes or on SIGHUP; an invalid file keeps the previous rules in force.\n"+
		"Keys set on a resource that no rule names any more are deleted: the resources written to are recorded in a ConfigMap.")
	var f runFlags
	fs.StringVar(&f.rules, "rules", "rules.yaml", "Path to the rules file")
	fs.IntVar(&f.workers, "workers", 8, "Number of objects synced in parallel")
	fs.DurationVar(&f.resync, "resync-period", 0, "How often every cached object is synced again although nothing changed, e.g. 10h (0: never; events alone keep objects converged)")
	fs.BoolVar(&f.watchRules, "watch-rules", true, "Reload the rules file when it changes (SIGHUP always reloads it)")
	fs.BoolVar(&f.events, "events", false, "Record a Normal event on every object changed and a Warning event when a change is rejected")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", "", "Address to serve Prometheus metrics on at /metrics, e.g. :8080 (default off)")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", "", "Address to serve /healthz and /readyz on, e.g. :8081 (default off)")
	fs.IntVar(&f.maxChanges, "max-changes", 0, "Hold a reload of the rules file that would change more objects than this (as the caches count them) until SIGHUP confirms it with the file unchanged (0: never hold)")
	fs.BoolVar(&f.admissionPolicies, "admission-policies", false, "Also keep MutatingAdmissionPolicies in the cluster that apply the rules as objects are created or updated (see 'admission'); they are created, updated and deleted with the rules")
	f.record = addRecordFlags(fs)
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
	if err := checkMaxChanges(f.maxChanges); err != nil {
		return e.usageError(fs, err)
	}
	if err := f.shard.validate(fs.Changed, f.leader); err != nil {
		return e.usageError(fs, err)
	}
	if err := f.record.validate(); err != nil {
		return e.usageError(fs, err)
	}
	if err := f.validateAdmission(); err != nil {
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
// the controller that enforces them, the record of the resources it writes
// to, and what reports on them.
type app struct {
	flags      runFlags
	cfg        *rest.Config
	metrics    *metrics.Metrics
	record     *record.Record
	controller *controller.Controller
	reloader   *reloader.Reloader
	stopEvents func()
	// apply puts rules in force: the admission policies, then the controller.
	apply     policysync.ApplyFunc
	admission *admissionSync
	// loaded describes the rules loaded at start, for the start log.
	loaded []any
	// sharding keeps this replica's shard current.
	sharding sharding
	// leading says whether this replica leads, for the readiness probe.
	leading atomic.Bool
}

// newApp builds run's parts, each complete before the next receives it: the
// rules, loaded (before anything talks to the cluster) and compiled once;
// the clients and the record (read when this replica starts to lead); the
// trigger that has the rules resolved again; the controller, which pulls it
// when a resource stops being served; and the reloader, which owns the
// compiled rules and applies new ones to the controller.
func newApp(ctx context.Context, f runFlags) (*app, error) {
	file, err := rules.Load(f.rules)
	if err != nil {
		return nil, err
	}
	cfg, resolver, err := f.clusterFlags.resolver()
	if err != nil {
		return nil, err
	}
	// A server that cannot say which resources it serves fails the start
	// (resolve.ErrUnreachable): there are no rules in force yet to keep,
	// and the Pod restarts, with the kubelet's back-off, until it can.
	set, unresolved, err := resolve.Compile(f.rules, file, resolver.Resolve, f.clusterFlags.exclude)
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
	rec, err := f.record.record(cfg, f.clusterFlags.namespace())
	if err != nil {
		return nil, err
	}
	m := metrics.New()
	recorder, stopEvents, err := eventRecorder(ctx, cfg, f.events)
	if err != nil {
		return nil, err
	}

	shardListWatch, sharding, err := f.shard.build(klog.FromContext(ctx), cfg, dyn, f.leader, m.Registry)
	if err != nil {
		return nil, err
	}
	resolveAgain := reloader.NewTrigger()
	c := controller.NewController(dyn, metadataClient, controller.Options{
		Workers:      f.workers,
		ResyncPeriod: f.resync,
		Namespace:    f.clusterFlags.namespace(),
		FieldManager: f.record.fieldManager,
		ResourceGone: func(schema.GroupVersionResource) { resolveAgain.Resolve() },
		Metrics:      m,
		Recorder:     recorder,
		Shard:        shardListWatch,
		ClientQPS:    cfg.QPS,
		ClientBurst:  cfg.Burst,
		Record:       rec,
		Resolver:     resolver,
		Partial:      f.shard.enabled(),
	})
	m.Registry.MustRegister(cachedObjectsGauge(c))
	adm, err := newAdmissionSync(f, cfg)
	if err != nil {
		return nil, err
	}
	apply := adm.wrap(c.SetRules)
	if f.admissionPolicies {
		apply = recordRuled(rec, apply)
	}
	rl := reloader.New(reloader.Options{
		Path:    f.rules,
		Resolve: resolver.Resolve,
		Exclude: f.clusterFlags.exclude,
		Reset:   resolver.Reset,
		Apply:   apply,
		Trigger: resolveAgain,
		Watch:   f.watchRules,
		Metrics: m,
		Guard:   changeGuard(f.maxChanges, c.Preview),
	}, file, set, unresolved)
	return &app{
		flags: f, cfg: cfg, metrics: m, record: rec, controller: c, reloader: rl, stopEvents: stopEvents, sharding: sharding,
		apply: apply, admission: adm,
		loaded: []any{"rules", len(file.Rules), "resources", len(set.Targets), "fieldManager", f.record.fieldManager, "record", rec.Ref()},
	}, nil
}

// run starts the servers, then enforces the rules while this replica leads.
func (a *app) run(ctx context.Context) error {
	if err := startServers(ctx, a.flags, a.metrics, server.Health(a.ready, a.readyNotes)); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting", append([]any{"version", version.Version, "server", a.cfg.Host}, a.loaded...)...)
	return a.flags.leader.withLeader(ctx, a.cfg, a.setLeading, a.lead)
}

// ready is the readiness check: the leader is ready once its informers
// have synced (a member of a shard group: those of all of its share); a
// replica standing by is ready to take over.
func (a *app) ready() error {
	if a.leading.Load() && !a.controller.HasSynced() {
		return errors.New("informers not synced")
	}
	return a.sharding.ready()
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

// lead reads the record, then runs the controller on the rules in force,
// and the reloader that keeps them up to date, until ctx ends or the
// reloader fails. A record that cannot be read stops it: without it, the
// controller could neither prune nor write.
func (a *app) lead(ctx context.Context) error {
	if err := a.record.Load(ctx); err != nil {
		return fmt.Errorf("%w (kube-annotator rbac grants access to the record; --field-manager and --record-namespace name it)", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil)
	if err := a.sharding.join(ctx); err != nil {
		return err
	}
	a.apply(ctx, a.reloader.Set())
	wg.Go(func() { a.admission.run(ctx) })
	wg.Go(func() {
		if err := a.sharding.run(ctx, a.controller); err != nil {
			cancel(err)
		}
	})
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
func startServers(ctx context.Context, f runFlags, m *metrics.Metrics, health http.Handler) error {
	if f.metricsAddr != "" {
		if _, err := server.Start(ctx, "metrics", f.metricsAddr, server.Metrics(m.Registry)); err != nil {
			return err
		}
	}
	if f.probeAddr != "" {
		if _, err := server.Start(ctx, "health probes", f.probeAddr, health); err != nil {
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
