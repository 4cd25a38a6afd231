package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kube-annotator/kube-annotator/pkg/controller/backlog"
	"github.com/kube-annotator/kube-annotator/pkg/controller/expect"
	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/controller/pace"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"github.com/kube-annotator/kube-annotator/pkg/controller/rulestats"
	"github.com/kube-annotator/kube-annotator/pkg/fight"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Options configure a Controller.
type Options struct {
	// Workers is the number of objects synced in parallel.
	Workers int
	// ResyncPeriod, when positive, is how often the informers deliver
	// every cached object again; each is then synced although nothing
	// changed. Zero turns resyncs off.
	ResyncPeriod time.Duration
	// Namespace limits namespaced resources to one namespace; "" is all.
	Namespace string
	// FieldManager names the controller in the objects' managedFields;
	// reconcile.FieldManager when empty.
	FieldManager string
	// WriteTimeout bounds one write to the API server. Writes do not end
	// when the controller is asked to stop, so that a write in flight is
	// finished rather than abandoned.
	WriteTimeout time.Duration
	// ResourceGone, when set, is called when the API server answers an
	// informer's list or watch with NotFound: the resource is no longer
	// served (its CRD was deleted), and the rules should be resolved again.
	ResourceGone func(gvr schema.GroupVersionResource)
	// Metrics count syncs and writes and carry the queue's metrics. When
	// nil, the controller keeps them in a registry of its own that nothing
	// serves.
	Metrics *metrics.Metrics
	// Shard limits lw, the list and watch of a ruled resource's informer
	// in a namespace ("" for all), to this replica's share of the
	// objects; the namespace informer is never sharded. When nil,
	// informers see every object.
	Shard func(gvr schema.GroupVersionResource, namespace string, lw *cache.ListWatch) *cache.ListWatch
	// Recorder records a Normal event on every object the controller
	// changes and a Warning event when a change is rejected. When nil, no
	// event is recorded.
	Recorder events.EventRecorder
	// ClientQPS and ClientBurst are the client's rate limit (rest.Config's
	// QPS and Burst). Retries of failed syncs follow it in all, on top of
	// each object's exponential backoff; a ClientQPS of zero or less is no
	// limit.
	ClientQPS   float32
	ClientBurst int
	// Record lists the resources the controller writes to, durably: a
	// resource is recorded before the first write to it (and when keys the
	// controller owns are found on its objects), and pruned when it leaves
	// the rules. Load it before SetRules. When nil, nothing is recorded and
	// a resource that leaves the rules is no longer watched.
	Record Record
	// Resolver resolves the recorded resources to prune. When nil, none
	// resolves: they wait, reported as not served.
	Resolver Resolver
	// Partial is set when the controller sees only its share of the
	// objects (Shard): a prune then deletes the keys on its share, and
	// leaves the resource in the record, as the other shards' objects may
	// still carry keys. A process that sees every object removes it.
	Partial bool
	// Reports is told each object's verdict, for the reports (nil: none).
	Reports rulestats.Reporter
	// Pace paces the writes of tenants' rules (nil: none are paced).
	Pace *pace.Pacer
}

// maxQueued is how many keys the work queue holds at once; a burst's
// others wait in its backlog (package backlog).
const maxQueued = 10000

// Controller enforces a rules.Set on the objects of a cluster.
type Controller struct {
	metadata metadata.Interface
	opts     Options
	queue    *backlog.Queue[queued]
	limiter  *retry.Limiter[queued]
	failures *retry.FailureLog
	expect   *expect.Echoes
	stats    *rulestats.Stats
	fights   *fight.Detector[queued]
	writer   *reconcile.Writer
	// failed carries a setup error of SetRules to Run, which stops on it.
	failed chan error
	// informers builds the informers of resources and sources.
	informers *informer.Builder
	// enqueueInitialList enqueues every object of an initial list, as
	// before settled decided them: only to measure what that saves.
	enqueueInitialList bool

	// mu guards the lifecycle of the resources: update changes it, the
	// workers read it. No informer is stopped, and so waited for, under
	// mu, which informers' handlers take.
	mu sync.RWMutex
	// set are the rules in force; given whether SetRules has set any
	// (before it, set is empty and nothing is cached).
	set   *rules.Set
	given bool
	// resources are the ruled resources and the recorded ones being
	// pruned or waiting to be (see resources.go).
	resources map[schema.GroupResource]*resource
	// sources are the informers of the objects the rules read besides
	// the objects ruled, by source, each run while a target needs it
	// (see sources.go).
	sources map[*source.Source]*informer.Informer
	// look finds those objects in the sources' caches, for the rules.
	look source.Lookup
}

// NewController returns a controller that watches metadata and writes
// through metadataClient, and watches whole objects through client.
func NewController(client dynamic.Interface, metadataClient metadata.Interface, opts Options) *Controller {
	if opts.Workers < 1 {
		opts.Workers = 1
	}
	if opts.FieldManager == "" {
		opts.FieldManager = reconcile.FieldManager
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 30 * time.Second
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New()
	}
	if opts.Shard == nil {
		opts.Shard = func(_ schema.GroupVersionResource, _ string, lw *cache.ListWatch) *cache.ListWatch { return lw }
	}
	if opts.Recorder == nil {
		opts.Recorder = discardEvents{}
	}
	if opts.Record == nil {
		opts.Record = noRecord{}
	}
	if opts.Resolver == nil {
		opts.Resolver = noResolver{}
	}
	qcfg := workqueue.TypedRateLimitingQueueConfig[queued]{Name: "kube-annotator", MetricsProvider: opts.Metrics.Workqueue}
	limiter := retry.NewLimiter[queued](clock.RealClock{}, opts.ClientQPS, opts.ClientBurst)
	c := &Controller{
		metadata: metadataClient,
		opts:     opts,
		queue:    backlog.New(workqueue.NewTypedRateLimitingQueueWithConfig(limiter, qcfg), maxQueued, opts.Metrics.Workqueue.NewDepthMetric(qcfg.Name)),
		limiter:  limiter,
		failures: retry.NewFailureLog(clock.RealClock{}, retry.FailureLogInterval),
		expect:   expect.New(),
		stats:    rulestats.New(opts.Metrics, opts.Reports),
		fights:   newFights(clock.RealClock{}, opts.Metrics),
		informers: &informer.Builder{Client: client, Metadata: metadataClient, FieldManager: opts.FieldManager,
			Shared: objcache.NewInterner(), ResyncPeriod: opts.ResyncPeriod, Shard: opts.Shard},
		failed:    make(chan error, 1),
		set:       &rules.Set{},
		resources: map[schema.GroupResource]*resource{},
	}
	c.look = sourceCaches{c}
	c.writer = reconcile.NewWriter(metadataClient, opts.FieldManager, opts.Record, func(gvr schema.GroupVersionResource, err error) {
		metrics.Count(opts.Metrics.Writes, gvr.GroupResource().String(), err)
		c.observeWrite(err)
	})
	return c
}

// discardEvents is the event recorder of a controller that records none.
type discardEvents struct{}

func (discardEvents) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {}

// Run runs the workers until ctx is cancelled; SetRules, called before or
// while Run runs with a context that lives as long, says what to enforce.
// Workers do not wait for every cache to sync: each object is synced on its
// own, so a resource whose list is slow or forbidden does not hold up the
// others. On cancellation Run stops taking work, lets in-flight writes
// finish, stops the informers and returns nil. If SetRules could not set
// up an informer, Run stops the same way and returns that error.
func (c *Controller) Run(ctx context.Context) (err error) {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	logger.Info("Starting workers", "count", c.opts.Workers)
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() { wait.UntilWithContext(ctx, c.runWorker, time.Second) })
	}
	wg.Go(func() { c.runPrunes(ctx) })
	wg.Go(func() { wait.UntilWithContext(ctx, func(context.Context) { c.fights.Sweep() }, fight.Window) })
	go c.watchSynced(ctx)

	select {
	case <-ctx.Done():
	case err = <-c.failed:
		logger.Error(err, "Cannot enforce the rules")
		cancel()
	}
	logger.Info("Shutting down: finishing in-flight work")
	c.queue.ShutDown()
	wg.Wait()
	c.stopAll()
	logger.Info("Stopped")
	return err
}

// SetRules makes set the rules in force: it starts informers for newly
// ruled resources, prunes recorded resources no longer ruled (and stops the
// informers of the others), and enqueues the cached objects of resources
// whose annotations changed, so that the new rules apply to existing
// objects at once. Informers live until ctx ends or a later SetRules (or
// the end of a prune) stops them. An informer that cannot be set up is an
// error that stops Run: without its handlers or cache transform, the
// controller would not enforce the rules as they say.
func (c *Controller) SetRules(ctx context.Context, set *rules.Set) {
	if err := c.setRules(ctx, set); err != nil {
		c.fail(err)
	}
}

// fail makes Run stop and return err.
func (c *Controller) fail(err error) {
	select {
	case c.failed <- err:
	default: // Run stops on an earlier error already
	}
}

func (c *Controller) setRules(ctx context.Context, set *rules.Set) error {
	c.initRules(set)
	return c.transition(ctx, observed{rules: set, resolve: c.opts.Resolver.ResolveGroupResource})
}

func (c *Controller) enqueueStoreKey(gvr schema.GroupVersionResource, storeKey string) {
	ns, name, err := cache.SplitMetaNamespaceKey(storeKey)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(Key{GVR: gvr, Namespace: ns, Name: name}.queued())
}

func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem syncs one key. It returns false when the controller
// is shutting down.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	q, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(q)
	key := q.key()
	if ctx.Err() != nil {
		return false // stopping: take no new work; a restart resyncs it
	}
	logger := klog.FromContext(ctx)
	err := c.syncSafely(ctx, key)
	c.opts.Metrics.CountSync(key.GVR.GroupResource().String(), err)
	switch {
	case err == nil:
		c.queue.Forget(q)
	case retry.Permanent(err):
		logger.Error(err, "Giving up on object until it or the rules change", "key", key.String())
		c.queue.Forget(q)
	default:
		c.retryLater(ctx, key, err)
	}
	return true
}

// syncSafely runs syncHandler, turning a panic into an error so that one
// bad object cannot take the worker down.
func (c *Controller) syncSafely(ctx context.Context, key Key) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic syncing %s: %v", key, r)
		}
	}()
	return c.syncHandler(ctx, key)
}

// initRules creates the series of every rule in set at zero, and keeps
// the coverage gauge and the reports to those rules.
func (c *Controller) initRules(set *rules.Set) {
	var names []string
	for _, t := range set.Targets {
		for _, r := range t.Rules {
			c.opts.Metrics.InitRule(r.Name)
			names = append(names, r.Name)
		}
	}
	c.stats.SetRules(names)
}
