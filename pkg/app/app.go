package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/controller/pace"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/policysync"
	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/reloader"
	"github.com/kube-annotator/kube-annotator/pkg/reports"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/server"
	"github.com/kube-annotator/kube-annotator/pkg/tenantwatch"
	"github.com/kube-annotator/kube-annotator/pkg/version"
)

// Run builds the process that cfg, validated, describes and runs it until
// ctx ends, leadership is lost or a part fails.
func Run(ctx context.Context, cfg Config) error {
	tuneGC(os.LookupEnv, cgroupMemoryLimit)
	a, err := newApp(ctx, cfg)
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
	cfg        Config
	clients    *clients
	metrics    *metrics.Metrics
	record     *record.Record
	controller *controller.Controller
	reloader   *reloader.Reloader
	tenants    *tenantwatch.Watch
	// pacer paces the writes of the tenants' rules.
	pacer      *pace.Pacer
	stopEvents func()
	// apply puts rules in force (applyChain); repair keeps it repaired;
	// applyNotes says what /readyz adds about it.
	apply      policysync.ApplyFunc
	repair     func(context.Context)
	applyNotes func() []string
	// loaded describes the rules loaded at start, for the start log.
	loaded []any
	// sharding keeps this replica's shard current.
	sharding sharding
	// reports writes the reports, or deletes those written before.
	reports func(context.Context)
	// leading says whether this replica leads, for the readiness probe.
	leading atomic.Bool
}

// clients are the process's clients of one API server: one clientset for
// the record, Leases, events and admission policies, and the dynamic and
// metadata clients of the controller.
type clients struct {
	rest     *rest.Config
	kube     kubernetes.Interface
	dynamic  dynamic.Interface
	metadata metadata.Interface
	resolver *resolve.Resolver
}

// newClients returns the clients of the API server cfg configures, and a
// resolver over its discovery. None connects yet.
func newClients(cfg *rest.Config) (*clients, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{rest: cfg, kube: cs, dynamic: dyn, metadata: md, resolver: resolve.New(cs.Discovery())}, nil
}

// newApp builds the process's parts, each complete before the next
// receives it: the rules, loaded (before anything talks to the cluster)
// and compiled once; the clients and the record (read when this replica
// starts to lead); the trigger that has the rules resolved again; the
// controller, which pulls it when a resource stops being served; and the
// reloader, which owns the compiled rules and applies new ones through the
// apply chain.
func newApp(ctx context.Context, cfg Config) (*app, error) {
	file, err := rules.Load(cfg.RulesPath)
	if err != nil {
		return nil, err
	}
	restConfig, err := cfg.RESTConfig()
	if err != nil {
		return nil, err
	}
	cl, err := newClients(restConfig)
	if err != nil {
		return nil, err
	}
	// A server that cannot say which resources it serves fails the start
	// (resolve.ErrUnreachable): there are no rules in force yet to keep,
	// and the Pod restarts, with the kubelet's back-off, until it can.
	set, unresolved, err := resolve.Compile(cfg.RulesPath, file, cl.resolver.Resolve, cl.resolver.Schema, cfg.ExcludeNamespaces)
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, clients: cl, metrics: metrics.New(),
		record: record.New(cl.kube.CoreV1(), cfg.Record.Namespace, cfg.Record.FieldManager, cfg.Namespace)}
	a.record.Observe(a.metrics.Record.Observe)
	resolveAgain := reloader.NewTrigger()
	if err := a.newController(ctx, resolveAgain); err != nil {
		return nil, err
	}
	a.apply, a.repair, a.applyNotes = applyChain(cfg, cl.kube, a.record, a.controller.SetRules, a.metrics.Registry)
	a.tenants = tenantwatch.New(cl.kube, record.StatusWriter, tenantsWait, tenantwatch.NewMetrics(a.metrics.Registry))
	a.reloader = reloader.New(reloader.Options{
		Path:    cfg.RulesPath,
		Resolve: cl.resolver.Resolve,
		Schema:  cl.resolver.Schema,
		Exclude: cfg.ExcludeNamespaces,
		Reset:   cl.resolver.Reset,
		Apply:   a.apply,
		Trigger: resolveAgain,
		Watch:   cfg.WatchRules,
		Metrics: a.metrics,
		Guard:   changeGuard(cfg.MaxChanges, cfg.Names.MaxChanges, a.controller.Preview),
		Tenants: a.tenants,
		Pace:    a.pacer.Set,
		Changed: a.controller.Changed,
	}, file, set, unresolved)
	a.loaded = []any{"rules", len(file.Rules), "resources", len(set.Targets), "fieldManager", cfg.Record.FieldManager, "record", a.record.Ref()}
	return a, nil
}

// tenantsWait is how long a reload waits, at most, for the tenants'
// ConfigMaps to be listed; past it, the rules in force stay and the
// reload is tried again.
const tenantsWait = 30 * time.Second

// newController builds the event recorder, the sharding and the
// controller, which pulls resolveAgain when a resource stops being served.
func (a *app) newController(ctx context.Context, resolveAgain reloader.Trigger) error {
	cfg, cl := a.cfg, a.clients
	recorder, stopEvents, err := eventRecorder(ctx, cl.kube, cfg.Events)
	if err != nil {
		return err
	}
	a.stopEvents = stopEvents
	a.pacer = pace.New(clock.RealClock{}, pace.NewMetrics(a.metrics.Registry))
	shardListWatch, sharding, err := buildSharding(klog.FromContext(ctx), cfg.Shard, cl.kube, cl.dynamic, cfg.Leader.Namespace, a.metrics.Registry)
	if err != nil {
		stopEvents()
		return err
	}
	a.sharding = sharding
	store, opts := reports.NewStore(), controller.Options{
		Workers:      cfg.Workers,
		ResyncPeriod: cfg.ResyncPeriod,
		Namespace:    cfg.Namespace,
		FieldManager: cfg.Record.FieldManager,
		ResourceGone: func(schema.GroupVersionResource) { resolveAgain.Resolve() },
		Metrics:      a.metrics,
		Recorder:     recorder,
		Shard:        shardListWatch,
		ClientQPS:    cl.rest.QPS,
		ClientBurst:  cl.rest.Burst,
		Record:       a.record,
		Resolver:     cl.resolver,
		Partial:      cfg.Shard.Enabled(),
		Pace:         a.pacer,
	}
	if cfg.Reports.Enabled {
		opts.Reports = store
	}
	a.controller = controller.NewController(cl.dynamic, cl.metadata, opts)
	a.reports = reportsLoop(cfg, cl.dynamic, store, a.controller.HasSynced)
	a.metrics.Registry.MustRegister(cachedObjectsGauge(a.controller))
	return nil
}

// run starts the servers, then enforces the rules while this replica leads.
func (a *app) run(ctx context.Context) error {
	if err := startServers(ctx, a.cfg, a.metrics, server.Health(a.ready, a.readyNotes)); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting", append([]any{"version", version.Version, "server", a.clients.rest.Host}, a.loaded...)...)
	return withLeader(ctx, a.clients.kube, a.cfg.Leader, a.setLeading, a.lead)
}

// ready is the readiness check: the leader is ready once its informers
// have synced (a member of a shard group: those of all of its share),
// unless it cannot write the record; a replica standing by is ready to
// take over.
func (a *app) ready() error {
	if a.leading.Load() {
		if err := recordWritable(a.record, a.cfg.Names); err != nil {
			return err
		}
		if !a.controller.HasSynced() {
			return errors.New("informers not synced")
		}
	}
	return a.sharding.ready()
}

// recordWritable says why the controller cannot write, when the last
// attempt to change rec failed: a resource is written to only once rec
// names it. The next attempt, a retry of the sync that needed it, ends it.
// names say which settings name the record.
func recordWritable(rec *record.Record, names Names) error {
	if err := rec.WriteError(); err != nil {
		return fmt.Errorf("cannot write the record, so resources it does not name yet are not written to: %v (%s)", err, names.recordHint())
	}
	return nil
}

// readyNotes is what /readyz says besides "ok": why the rules file is
// not in force (a reload held, a file invalid), and
// admission policies the API server cannot take.
func (a *app) readyNotes() []string {
	notes := a.applyNotes()
	if note := a.reloader.Note(); note != "" {
		notes = append([]string{note}, notes...)
	}
	return notes
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
		return fmt.Errorf("%w (%s)", err, a.cfg.Names.recordHint())
	}
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil)
	if err := a.sharding.join(ctx); err != nil {
		return err
	}
	defer a.tenants.Stop()
	if err := a.reloader.Prepare(ctx); err != nil {
		return nil // ctx ended
	}
	a.apply(ctx, a.reloader.Set())
	wg.Go(func() { a.repair(ctx) })
	wg.Go(func() { releaseAfterBursts(ctx, a.metrics.Activity.Read) })
	wg.Go(func() { a.reports(ctx) })
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
