package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
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
// and is looked up again every pruneRetryInterval. The check of a prune
// reads the resource's cache without c.mu, which workers and SetRules
// take; update applies what it found only if the resource has not changed
// meanwhile.

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
	ResolveGroupResource(gr schema.GroupResource) (source.Resource, error)
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

func (noResolver) ResolveGroupResource(gr schema.GroupResource) (source.Resource, error) {
	return source.Resource{}, fmt.Errorf("resource %s not resolved: no resolver", gr)
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

// errNotServed is why a pruning informer stopped: its list or watch
// answered NotFound.
var errNotServed = errors.New("the API server answered NotFound: the resource is no longer served")

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

// pruneCheck is a pruning resource as checkPrunes found it under c.mu, to
// read its cache without c.mu.
type pruneCheck struct {
	r      *resource
	gen    uint64
	target *rules.Target
	store  cache.Store
}

// checkPrunes finishes the prunes that are complete — removing their
// resource from the record, then stopping their informer —, stops those
// of resources no longer served, which then wait, and reports the others.
// It reads the caches without c.mu, which workers and SetRules wait on:
// update applies what it found only to a resource still as it was.
func (c *Controller) checkPrunes(ctx context.Context) {
	checks, active := c.prunesToCheck()
	if !active {
		return
	}
	logger := klog.FromContext(ctx)
	complete := map[schema.GroupResource]uint64{}
	for _, p := range checks {
		if !c.clean(p) {
			continue
		}
		// Removed first: were the informer stopped and the removal to
		// fail, nothing would retry it.
		if !c.opts.Partial {
			if err := c.opts.Record.Remove(ctx, p.r.gr); err != nil {
				logger.Error(err, "Pruned a resource, but cannot remove it from the record; will retry", "resource", source.GVRString(p.target.GVR))
				continue
			}
		}
		complete[p.r.gr] = p.gen
	}
	if err := c.transition(ctx, observed{complete: complete}); err != nil {
		c.fail(err)
	}
}

// prunesToCheck returns the pruning resources whose prune may be
// complete, and whether any resource is being pruned.
func (c *Controller) prunesToCheck() (checks []pruneCheck, active bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, r := range c.resources {
		if r.phase != pruning {
			continue
		}
		active = true
		if !r.informer.Gone.Load() && c.quiet(r) {
			checks = append(checks, pruneCheck{r: r, gen: r.gen, target: r.target, store: r.informer.Informer.GetStore()})
		}
	}
	return checks, active
}

// quiet reports whether nothing but cached objects can keep the prune of
// r from being complete: its cache has synced, no write awaits its echo
// and no sync is under way — one that started before the resource left
// the rules may still write what they wanted. Keys still queued do not
// matter: with nothing to delete, their syncs write nothing. c.mu is
// held.
func (c *Controller) quiet(r *resource) bool {
	return r.informer.Informer.HasSynced() && r.syncs.Load() == 0 && !c.expect.Waiting(r.target.GVR)
}

// clean reports whether no object p's cache holds carries a key the
// controller owns; one that opts out keeps the prune going until it opts
// in again or loses the key. It reads every cached object, without c.mu.
func (c *Controller) clean(p pruneCheck) bool {
	for _, o := range p.store.List() {
		obj, ok := o.(objcache.Object)
		if !ok {
			return false
		}
		d, err := reconcile.Decide(p.target, obj, nil, c.opts.FieldManager)
		if err != nil || d.Owns {
			return false
		}
	}
	return true
}

// retryPending reads the record again and looks the waiting resources up
// again, with fresh discovery: one that is served again is pruned, one
// that left the record (a user removed it) is dropped.
func (c *Controller) retryPending(ctx context.Context) {
	c.mu.RLock()
	var waits []schema.GroupResource
	for gr, r := range c.resources {
		if r.phase == waiting {
			waits = append(waits, gr)
		}
	}
	c.mu.RUnlock()
	if len(waits) == 0 {
		return
	}
	if err := c.opts.Record.Load(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot read the record again")
	}
	c.opts.Resolver.Reset()
	resolved := map[schema.GroupResource]resolution{}
	for _, gr := range waits {
		r, err := c.opts.Resolver.ResolveGroupResource(gr)
		resolved[gr] = resolution{r, err}
	}
	if err := c.transition(ctx, observed{resolved: resolved}); err != nil {
		c.fail(err)
	}
}

func (c *Controller) reportPruning(ctx context.Context, r *resource) {
	klog.FromContext(ctx).Info("Pruning a resource no rule names: deleting the keys set on its objects",
		"resource", source.GVRString(r.target.GVR), "record", c.opts.Record.Ref())
	c.setPruneReason(ctx, r, metrics.PruneRunning, nil)
}

// setPruneReason sets kube_annotator_prune_pending of r to reason ("": not
// pending), and logs when a prune starts to wait on err or reason.
func (c *Controller) setPruneReason(ctx context.Context, r *resource, reason string, err error) {
	if r.reason == "" && reason == "" {
		return
	}
	c.opts.Metrics.SetPrunePending(r.gr.String(), reason)
	last := r.reason
	r.reason = reason
	if reason == last || reason == "" || reason == metrics.PruneRunning {
		return
	}
	klog.FromContext(ctx).Error(err, "Cannot prune a resource no rule names; it stays in the record",
		"resource", r.gr.String(), "reason", reason, "record", c.opts.Record.Ref())
}
