package controller

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// The lifecycle of a resource. Every resource the rules name, and every
// recorded resource they no longer name, is one *resource in
// Controller.resources, with its phase. Phases change in one function,
// update, under c.mu, as the garbage collector's syncMonitors changes its
// monitors: it computes the resources wanted — the targets of the rules
// in force, and the recorded resources to prune (reconcile.ToPrune) —
// diffs them against the current ones, and starts, retargets or stops
// their informers. What is learned without c.mu (a prune found complete,
// a waiting resource served again, informers built for a reshard) is
// passed to it as an observed.

// phase is where a resource is in its lifecycle.
type phase int

const (
	// ruled: a rule names the resource; its informer runs with the rules'
	// target, and serves once it has synced.
	ruled phase = iota
	// pruning: no rule names the resource, which is recorded; its
	// informer runs with a target that has no rule, so that syncs delete
	// the keys the controller owns and touch nothing else.
	pruning
	// waiting: no rule names the resource, which is recorded, and it
	// cannot be pruned now: it is not served. No informer runs; it is
	// looked up again every pruneRetryInterval.
	waiting
	// pruned: this replica pruned its share of the resource's objects
	// (Options.Partial), which stays recorded for the other shards. No
	// informer runs; it is pruned again when the rules are next set.
	pruned
)

func (p phase) String() string {
	switch p {
	case ruled:
		return "ruled"
	case pruning:
		return "pruning"
	case waiting:
		return "waiting"
	}
	return "pruned"
}

// resource is one ruled or recorded resource. Its fields are read and
// written under c.mu, except those that say otherwise.
type resource struct {
	gr    schema.GroupResource
	phase phase
	// gen counts the changes of phase and informer, so that work done
	// without c.mu can tell whether the resource is still as it found it.
	gen uint64
	// target is what the informer's syncs enforce: the rules' target
	// while ruled, one without rules while pruning; nil otherwise.
	target *rules.Target
	// informer is nil while the resource waits or is pruned.
	informer *informer.Informer
	// reason is the prune reason last reported ("" when none).
	reason string
	// syncs counts, without c.mu, the syncs of the resource's objects
	// under way: a prune waits for them, as one that started before the
	// resource left the rules may still write what the rules wanted.
	syncs atomic.Int64
}

// observed is what the controller learned without c.mu that changes
// resources, for update.
type observed struct {
	// rules, when not nil, are the rules to put in force. Resources this
	// replica pruned are pruned again.
	rules *rules.Set
	// resolve, when not nil, resolves the recorded resources to prune
	// that have no state yet. When nil, they get none until the next
	// SetRules.
	resolve func(schema.GroupResource) (source.Resource, error)
	// resolved are waiting resources looked up again.
	resolved map[schema.GroupResource]resolution
	// complete are the prunes found complete, each at the generation of
	// its resource when its cache was read.
	complete map[schema.GroupResource]uint64
	// resharded are informers built for a reshard, to replace those of
	// ruled resources.
	resharded map[schema.GroupResource]reshard
}

// resolution is the result of looking a resource up.
type resolution struct {
	r   source.Resource
	err error
}

// reshard is an informer built to replace old, which it replaces if the
// resource still has old and fresh serves its target.
type reshard struct{ old, fresh *informer.Informer }

// transition applies o to the resources under c.mu, then stops the
// informers they no longer use, without c.mu: their handlers take it, and
// an informer stops only once its handlers return. An error is a setup
// error of an informer, on which Run stops.
func (c *Controller) transition(ctx context.Context, o observed) error {
	c.mu.Lock()
	stop, err := c.update(ctx, o)
	for _, ri := range stop {
		ri.Standby.Store(true) // from now on, events are the serving informers'
	}
	c.mu.Unlock()
	for _, ri := range stop {
		ri.Stop()
	}
	return err
}

// update changes the resources as o says; it returns the informers to
// stop. c.mu is held.
func (c *Controller) update(ctx context.Context, o observed) (stop []*informer.Informer, err error) {
	if o.rules != nil {
		c.set, c.given = o.rules, true
		for gr, r := range c.resources {
			if r.phase == pruned {
				delete(c.resources, gr)
			}
		}
	}
	toPrune := reconcile.ToPrune(c.opts.Record.Recorded(), c.set)
	wanted := map[schema.GroupResource]bool{}
	for gvr := range c.set.Targets {
		wanted[gvr.GroupResource()] = true
	}
	for _, gr := range toPrune {
		wanted[gr] = true
	}
	for gr, r := range c.resources {
		// A prune goes on until it is complete, even once the record
		// no longer lists its resource: the check removes it first.
		if r.phase == pruning && !wanted[gr] && !c.complete(r, o) {
			wanted[gr] = true
			toPrune = append(toPrune, gr)
		}
	}
	for gr, r := range c.resources {
		if !wanted[gr] {
			stop = c.drop(ctx, r, stop)
			delete(c.resources, gr)
		}
	}
	for _, t := range c.set.SortedTargets() {
		if stop, err = c.enforce(ctx, t, o, stop); err != nil {
			return stop, err
		}
	}
	for _, gr := range toPrune {
		if stop, err = c.prune(ctx, gr, o, stop); err != nil {
			return stop, err
		}
	}
	for gr, s := range o.resharded {
		if r := c.resources[gr]; r == nil || r.informer != s.fresh {
			stop = append(stop, s.fresh)
		}
	}
	return c.runSources(ctx, stop)
}

// drop ends the lifecycle of r, which the rules do not name and the
// record does not list: its informer is appended to stop.
func (c *Controller) drop(ctx context.Context, r *resource, stop []*informer.Informer) []*informer.Informer {
	logger := klog.FromContext(ctx)
	switch {
	case r.phase == ruled:
		logger.Info("Stopping informer", "resource", source.GVRString(r.target.GVR))
	case r.phase == pruning: // complete: update keeps the others
		logger.Info("Pruned a resource no rule names; removed it from the record",
			"resource", source.GVRString(r.target.GVR), "record", c.opts.Record.Ref())
	case r.phase == waiting:
		logger.Info("Resource removed from the record; it is not pruned", "resource", r.gr.String(), "record", c.opts.Record.Ref())
	}
	c.setPruneReason(ctx, r, "", nil)
	return c.stopInformer(r, stop)
}

// stopInformer appends the informer of r, if any, to stop, and forgets
// what is known of its objects.
func (c *Controller) stopInformer(r *resource, stop []*informer.Informer) []*informer.Informer {
	if r.informer == nil {
		return stop
	}
	c.expect.ForgetResource(r.target.GVR)
	c.stats.ForgetResource(r.target.GVR)
	stop = append(stop, r.informer)
	r.informer, r.target = nil, nil
	r.gen++
	return stop
}

// enforce puts t in force: on the informer of its resource, which is
// started, or built again when it cannot serve t.
func (c *Controller) enforce(ctx context.Context, t *rules.Target, o observed, stop []*informer.Informer) ([]*informer.Informer, error) {
	logger := klog.FromContext(ctx)
	gr := t.GVR.GroupResource()
	r := c.resources[gr]
	if r == nil {
		r = &resource{gr: gr}
		c.resources[gr] = r
	}
	if r.phase == pruning {
		logger.Info("Resource ruled again; pruning stops", "resource", source.GVRString(t.GVR), "rules", t.RuleNames())
	}
	if r.phase != ruled {
		c.setPruneReason(ctx, r, "", nil)
	}
	if s, ok := o.resharded[gr]; ok && r.phase == ruled && r.informer == s.old && s.fresh.Serves(t) {
		stop = append(stop, r.informer)
		r.informer = s.fresh
		r.informer.Standby.Store(false)
		r.gen++
		c.enqueueAll(t.GVR, r.informer)
	}
	if r.informer != nil && !r.informer.Serves(t) && !r.informer.Widen(ctx, t) {
		// The cache lacks what the rules now need (whole objects, or values
		// of keys it dropped), keeps whole objects the rules no longer read, or
		// lists another version: build it again, listing every object.
		logger.Info("Rebuilding informer", "resource", source.GVRString(t.GVR), "reason", "the rules need another part of each object, or another version")
		if r.informer.GVR != t.GVR {
			stop = c.stopInformer(r, stop) // what is known of the old version's objects goes
		} else {
			stop = append(stop, r.informer)
			r.informer = nil
		}
	}
	if r.informer == nil {
		logger.Info("Starting informer", "resource", source.GVRString(t.GVR), "rules", t.RuleNames())
		ri, err := c.start(ctx, t)
		if err != nil {
			return stop, err
		}
		r.informer, r.target, r.phase = ri, t, ruled
		r.gen++
		return stop, nil
	}
	changed := r.phase != ruled || !r.target.SameRules(t)
	if r.phase != ruled {
		r.phase = ruled
		r.gen++
	}
	r.target = t
	if changed {
		c.enqueueAll(t.GVR, r.informer)
	}
	return stop, nil
}

// prune moves the resource gr, recorded and named by no rule, along its
// prune: from ruled to pruning, from pruning to waiting when it is no
// longer served or to pruned when this replica's share is done, and from
// waiting to pruning when it is served again.
func (c *Controller) prune(ctx context.Context, gr schema.GroupResource, o observed, stop []*informer.Informer) ([]*informer.Informer, error) {
	r := c.resources[gr]
	switch {
	case r == nil && o.resolve == nil:
		return stop, nil
	case r == nil:
		r = &resource{gr: gr, phase: waiting}
		c.resources[gr] = r
		res, err := o.resolve(gr)
		if err != nil {
			c.setPruneReason(ctx, r, metrics.PruneNotServed, err)
			return stop, nil
		}
		return stop, c.startPrune(ctx, r, reconcile.Prune(res))
	case r.phase == ruled:
		t := reconcile.Prune(r.target.Resource)
		if !r.informer.Serves(t) {
			stop = append(stop, r.informer)
			r.informer = nil
			return stop, c.startPrune(ctx, r, t)
		}
		r.phase, r.target = pruning, t
		r.gen++
		c.enqueueAll(t.GVR, r.informer)
		c.reportPruning(ctx, r)
	case r.phase == pruning && r.informer.Gone.Load():
		stop = c.stopInformer(r, stop)
		r.phase = waiting
		c.setPruneReason(ctx, r, metrics.PruneNotServed, errNotServed)
	case r.phase == pruning && c.opts.Partial && c.complete(r, o):
		klog.FromContext(ctx).Info("Pruned this shard's objects of a resource no rule names; it stays in the record for the other shards",
			"resource", source.GVRString(r.target.GVR), "record", c.opts.Record.Ref())
		stop = c.stopInformer(r, stop)
		r.phase = pruned
		c.setPruneReason(ctx, r, "", nil)
	case r.phase == pruning && r.informer.Forbidden.Load():
		c.setPruneReason(ctx, r, metrics.PruneForbidden, nil)
	case r.phase == pruning:
		c.setPruneReason(ctx, r, metrics.PruneRunning, nil)
	case r.phase == waiting:
		res, ok := o.resolved[gr]
		switch {
		case !ok:
		case res.err != nil:
			c.setPruneReason(ctx, r, metrics.PruneNotServed, res.err)
		default:
			return stop, c.startPrune(ctx, r, reconcile.Prune(res.r))
		}
	}
	return stop, nil
}

// complete reports whether o found the prune of r complete, and r is
// still as it was then: same generation, and nothing under way since.
func (c *Controller) complete(r *resource, o observed) bool {
	gen, ok := o.complete[r.gr]
	return ok && gen == r.gen && c.quiet(r)
}

// startPrune starts the informer that prunes r with t.
func (c *Controller) startPrune(ctx context.Context, r *resource, t *rules.Target) error {
	ri, err := c.start(ctx, t)
	if err != nil {
		return err
	}
	r.informer, r.target, r.phase = ri, t, pruning
	r.gen++
	c.reportPruning(ctx, r)
	return nil
}

// start starts the informer of a ruled or pruned resource, with the
// metrics of its resource at zero.
func (c *Controller) start(ctx context.Context, t *rules.Target) (*informer.Informer, error) {
	c.opts.Metrics.InitResource(t.GVR.GroupResource().String())
	return c.startInformer(ctx, t, false)
}

// stopAll ends every resource's lifecycle, on shutdown, and stops their
// informers and those of the sources.
func (c *Controller) stopAll() {
	c.mu.Lock()
	var stop []*informer.Informer
	for _, r := range c.resources {
		if r.informer != nil {
			stop = append(stop, r.informer)
		}
	}
	stop = append(stop, c.sourceInformers()...)
	c.resources, c.sources = map[schema.GroupResource]*resource{}, nil
	c.mu.Unlock()
	for _, ri := range stop {
		ri.Stop()
	}
}
