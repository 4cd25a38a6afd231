package controller

import (
	"context"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// errNotServed is why a pruning informer stopped: its list or watch
// answered NotFound.
var errNotServed = errors.New("the API server answered NotFound: the resource is no longer served")

// pruneInformer is the informer of a resource being pruned.
type pruneInformer struct {
	gvr schema.GroupVersionResource
	ri  *resourceInformer
}

// checkPrunes finishes the prunes that are complete — removing their
// resource from the record, then stopping their informer —, stops those
// of resources no longer served, which then wait, and reports the others.
func (c *Controller) checkPrunes(ctx context.Context) {
	var gone, done []pruneInformer
	c.mu.RLock()
	for gvr, ri := range c.informers {
		if !ri.status.pruning.Load() {
			continue
		}
		switch gr := gvr.GroupResource(); {
		case ri.status.gone.Load():
			gone = append(gone, pruneInformer{gvr, ri})
		case c.pruned(gvr, ri):
			done = append(done, pruneInformer{gvr, ri})
		case ri.status.forbidden.Load():
			c.setPruneReason(ctx, gr, metrics.PruneForbidden, nil)
		default:
			c.setPruneReason(ctx, gr, metrics.PruneRunning, nil)
		}
	}
	c.mu.RUnlock()

	for _, p := range gone {
		c.stopPrune(p, func() { c.pend(ctx, p.gvr.GroupResource(), errNotServed) })
	}
	logger := klog.FromContext(ctx)
	for _, p := range done {
		gr := p.gvr.GroupResource()
		msg := "Pruned a resource no rule names; removed it from the record"
		if c.opts.Partial {
			msg = "Pruned this shard's objects of a resource no rule names; it stays in the record for the other shards"
		} else if err := c.opts.Record.Remove(ctx, gr); err != nil {
			// Removed first: were the informer stopped and the removal to
			// fail, nothing would retry it.
			logger.Error(err, "Pruned a resource, but cannot remove it from the record; will retry", "resource", rules.GVRString(p.gvr))
			continue
		}
		c.stopPrune(p, func() {
			logger.Info(msg, "resource", rules.GVRString(p.gvr), "record", c.opts.Record.Ref())
			c.setPruneReason(ctx, gr, "", nil)
		})
	}
}

// pruned reports whether the prune of gvr by ri is complete: its cache
// has synced, no cached object carries a key the controller owns — one
// that opts out keeps the prune going until it opts in again or loses the
// key —, no write awaits its echo and no sync is under way: one that
// started before the resource left the rules may still write what they
// wanted. Keys still queued do not matter: with nothing to delete, their
// syncs write nothing. c.mu is held.
func (c *Controller) pruned(gvr schema.GroupVersionResource, ri *resourceInformer) bool {
	if !ri.informer.HasSynced() || c.inflight.count(gvr) > 0 || c.expect.waiting(gvr) {
		return false
	}
	for _, o := range ri.informer.GetStore().List() {
		obj, ok := o.(cached)
		if !ok {
			return false
		}
		d, err := reconcile.Decide(ri.target, obj, nil, nil, c.opts.FieldManager)
		if err != nil || d.Owns {
			return false
		}
	}
	return true
}

// stopPrune stops p's informer, unless it stopped pruning meanwhile (the
// rules name its resource again), and then calls then.
func (c *Controller) stopPrune(p pruneInformer, then func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.informers[p.gvr] != p.ri || !p.ri.status.pruning.Load() {
		return
	}
	p.ri.stop()
	delete(c.informers, p.gvr)
	c.expect.forgetResource(p.gvr)
	c.stats.forgetResource(p.gvr)
	then()
}

// retryPending reads the record again and looks the waiting resources up
// again, with fresh discovery: one that is served again is pruned, one
// that left the record (a user removed it) is dropped.
func (c *Controller) retryPending(ctx context.Context) {
	c.mu.RLock()
	waiting := make([]schema.GroupResource, 0, len(c.pending))
	for gr := range c.pending {
		waiting = append(waiting, gr)
	}
	c.mu.RUnlock()
	if len(waiting) == 0 {
		return
	}
	logger := klog.FromContext(ctx)
	if err := c.opts.Record.Load(ctx); err != nil {
		logger.Error(err, "Cannot read the record again")
	}
	c.opts.Resolver.Reset()
	type resolved struct {
		r   rules.Resource
		err error
	}
	found := map[schema.GroupResource]resolved{}
	for _, gr := range waiting {
		r, err := c.opts.Resolver.ResolveGroupResource(gr)
		found[gr] = resolved{r, err}
	}

	c.mu.Lock()
	recorded := c.opts.Record.Recorded()
	for gr, res := range found {
		switch {
		case !c.pending[gr]:
			// ruled again meanwhile
		case !slices.Contains(recorded, gr):
			delete(c.pending, gr)
			logger.Info("Resource removed from the record; it is not pruned", "resource", gr.String(), "record", c.opts.Record.Ref())
			c.setPruneReason(ctx, gr, "", nil)
		case res.err != nil:
			c.pend(ctx, gr, res.err)
		default:
			delete(c.pending, gr)
			if err := c.startPrune(ctx, reconcile.Prune(res.r)); err != nil {
				c.fail(err)
			}
		}
	}
	dropped, err := c.runNamespaces(ctx)
	c.mu.Unlock()
	dropped.stopIfRunning()
	if err != nil {
		c.fail(err)
	}
}

// unpend drops what is known of resources set names again: pruning
// stops. c.mu is held.
func (c *Controller) unpend(ctx context.Context) {
	for gr := range c.pending {
		if c.ruled[gr] {
			delete(c.pending, gr)
			c.setPruneReason(ctx, gr, "", nil)
		}
	}
}

// setPruneReason sets kube_annotator_prune_pending of gr to reason ("":
// not pending), and logs when a prune starts to wait on err or reason.
func (c *Controller) setPruneReason(ctx context.Context, gr schema.GroupResource, reason string, err error) {
	c.opts.Metrics.SetPrunePending(gr.String(), reason)
	c.reportedMu.Lock()
	defer c.reportedMu.Unlock()
	if c.reported == nil {
		c.reported = map[schema.GroupResource]string{}
	}
	last := c.reported[gr]
	c.reported[gr] = reason
	if reason == last || reason == "" || reason == metrics.PruneRunning {
		return
	}
	klog.FromContext(ctx).Error(err, "Cannot prune a resource no rule names; it stays in the record",
		"resource", gr.String(), "reason", reason, "record", c.opts.Record.Ref())
}
