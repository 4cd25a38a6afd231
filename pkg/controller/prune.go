package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// Pruning. Sync deletes the keys the controller owns that no rule wants,
// but only on objects it looks at. When no rule names a resource any more,
// the controller keeps looking at it, as long as its Record lists the
// resource: a metadata informer runs with a target that has no rule, so
// that sync deletes every key the controller owns there and touches
// nothing else. Once no cached object has such a key and no sync of the
// resource is under way, the informer stops and the resource leaves the
// record. A recorded resource that no rule names when the rules are set
// (it left them while the controller was stopped) is pruned the same way.
// A resource that is not served (its CRD was deleted) waits, reported,
// and is looked up again every pruneRetryInterval.

// Record is the durable list of the resources the controller writes to;
// *record.Record is one.
type Record interface {
	// Ensure records a resource before the first write to it.
	reconcile.Ledger
	// Recorded lists the resources recorded for the controller's scope.
	Recorded() []schema.GroupResource
	// Remove removes a resource once it is pruned.
	Remove(ctx context.Context, gr schema.GroupResource) error
	// Load reads the record again, e.g. after a user removed a line.
	Load(ctx context.Context) error
	// Ref names the record in logs.
	Ref() string
}

// Resolver resolves a recorded resource to the version the server
// serves; *resolve.Resolver is one.
type Resolver interface {
	ResolveGroupResource(gr schema.GroupResource) (rules.Resource, error)
	// Reset drops cached discovery, so that the next resolution sees the
	// server as it is now.
	Reset()
}

// noRecord is the Record of a controller that records nothing: a resource
// that leaves the rules is no longer watched.
type noRecord struct{}

func (noRecord) Ensure(context.Context, schema.GroupResource) error { return nil }
func (noRecord) Recorded() []schema.GroupResource                   { return nil }
func (noRecord) Remove(context.Context, schema.GroupResource) error { return nil }
func (noRecord) Load(context.Context) error                         { return nil }
func (noRecord) Ref() string                                        { return "(none)" }

// noResolver resolves nothing.
type noResolver struct{}

func (noResolver) ResolveGroupResource(gr schema.GroupResource) (rules.Resource, error) {
	return rules.Resource{}, fmt.Errorf("resource %s not resolved: no resolver", gr)
}
func (noResolver) Reset() {}

const (
	// pruneCheckInterval is how often pruned resources are checked for
	// completion.
	pruneCheckInterval = time.Second
	// pruneRetryInterval is how often, while a prune waits, the record is
	// read again (a user may have removed the resource) and the waiting
	// resources are looked up again.
	pruneRetryInterval = 10 * time.Second
)

// informerStatus is what an informer's watch error handler and the syncs
// of its objects learn about its resource. It is read and written without
// c.mu.
type informerStatus struct {
	// pruning is set, under c.mu, while no rule names the resource.
	pruning atomic.Bool
	// gone is set when a list or watch answered NotFound.
	gone atomic.Bool
	// forbidden is set when a list, watch or write answered Forbidden,
	// and cleared by a successful write.
	forbidden atomic.Bool
}

// inflight counts the syncs under way, by resource.
type inflight struct {
	mu sync.Mutex
	n  map[schema.GroupVersionResource]int
}

// add counts one sync of gvr until done is called.
func (f *inflight) add(gvr schema.GroupVersionResource) (done func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[schema.GroupVersionResource]int{}
	}
	f.n[gvr]++
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.n[gvr]--; f.n[gvr] == 0 {
			delete(f.n, gvr)
		}
	}
}

func (f *inflight) count(gvr schema.GroupVersionResource) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[gvr]
}

// dropUnruled handles the informers of resources set does not name: a
// recorded resource is pruned, any other's informer stopped, as is a
// pruning informer of a resource that set names at another version. c.mu
// is held.
func (c *Controller) dropUnruled(ctx context.Context, set *rules.Set) error {
	recorded := c.opts.Record.Recorded()
	for gvr, ri := range c.informers {
		if _, ok := set.Targets[gvr]; ok {
			continue
		}
		gr := gvr.GroupResource()
		switch {
		case ri.status.pruning.Load() && !c.ruled[gr]:
			// still pruning
		case c.ruled[gr] || !slices.Contains(recorded, gr):
			klog.FromContext(ctx).Info("Stopping informer", "resource", rules.GVRString(gvr))
			ri.stop()
			delete(c.informers, gvr)
			c.expect.forgetResource(gvr)
			c.stats.forgetResource(gvr)
			if ri.status.pruning.Load() { // the rules name it at another version
				c.setPruneReason(ctx, gr, "", nil)
			}
		default:
			if err := c.prune(ctx, gvr, ri); err != nil {
				return err
			}
		}
	}
	return nil
}

// prune makes ri, the informer of a recorded resource that just left the
// rules, prune it. An informer of whole objects is replaced by a metadata
// informer. c.mu is held.
func (c *Controller) prune(ctx context.Context, gvr schema.GroupVersionResource, ri *resourceInformer) error {
	t := reconcile.Prune(ri.target.Resource)
	if ri.cannotServe(t) {
		ri.stop()
		delete(c.informers, gvr)
		return c.startPrune(ctx, t)
	}
	ri.target = t
	ri.status.pruning.Store(true)
	for _, k := range ri.informer.GetStore().ListKeys() {
		c.enqueueStoreKey(gvr, k)
	}
	c.reportPruning(ctx, t.GVR)
	return nil
}

// startPrune starts an informer that prunes t's resource. c.mu is held.
func (c *Controller) startPrune(ctx context.Context, t *rules.Target) error {
	c.opts.Metrics.InitResource(t.GVR.GroupResource().String())
	ri, err := c.startInformer(ctx, t, true)
	if err != nil {
		return err
	}
	c.informers[t.GVR] = ri
	c.reportPruning(ctx, t.GVR)
	return nil
}

func (c *Controller) reportPruning(ctx context.Context, gvr schema.GroupVersionResource) {
	klog.FromContext(ctx).Info("Pruning a resource no rule names: deleting the keys set on its objects",
		"resource", rules.GVRString(gvr), "record", c.opts.Record.Ref())
	c.setPruneReason(ctx, gvr.GroupResource(), metrics.PruneRunning, nil)
}

// pruneRecorded starts pruning the recorded resources that no rule names
// and that are neither pruned nor waiting already. c.mu is held.
func (c *Controller) pruneRecorded(ctx context.Context) error {
	for _, gr := range c.opts.Record.Recorded() {
		if c.ruled[gr] || c.pending[gr] || c.informerOf(gr) {
			continue
		}
		r, err := c.opts.Resolver.ResolveGroupResource(gr)
		if err != nil {
			c.pend(ctx, gr, err)
			continue
		}
		if err := c.startPrune(ctx, reconcile.Prune(r)); err != nil {
			return err
		}
	}
	return nil
}

// informerOf reports whether an informer runs for gr. c.mu is held.
func (c *Controller) informerOf(gr schema.GroupResource) bool {
	for gvr := range c.informers {
		if gvr.GroupResource() == gr {
			return true
		}
	}
	return false
}

// pend records that gr cannot be pruned now, because of err. c.mu is held.
func (c *Controller) pend(ctx context.Context, gr schema.GroupResource, err error) {
	if c.pending == nil {
		c.pending = map[schema.GroupResource]bool{}
	}
	c.pending[gr] = true
	c.setPruneReason(ctx, gr, metrics.PruneNotServed, err)
}

// runPrunes checks pruned resources every pruneCheckInterval and retries
// waiting ones every pruneRetryInterval, until ctx ends.
func (c *Controller) runPrunes(ctx context.Context) {
	check, retry := time.NewTicker(pruneCheckInterval), time.NewTicker(pruneRetryInterval)
	defer check.Stop()
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-check.C:
			c.checkPrunes(ctx)
		case <-retry.C:
			c.retryPending(ctx)
		}
	}
}
