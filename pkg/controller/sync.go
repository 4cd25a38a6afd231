package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/expect"
	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"github.com/kube-annotator/kube-annotator/pkg/controller/rulestats"
	"github.com/kube-annotator/kube-annotator/pkg/fight"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// syncHandler makes the object named by key carry what the rules want. It
// reads the object from the informer's cache (never from the API server),
// lets reconcile decide what must change — keys to set, and keys to delete
// because this controller set them and no rule wants them any more — and
// sends the requests that make that change, or nothing. The writer
// records the resource before it writes; a converged object that carries
// keys the controller owns (set before the resource was recorded) gets its
// resource recorded too, so that those keys are pruned when it leaves the
// rules.
func (c *Controller) syncHandler(ctx context.Context, key Key) error {
	e, done, err := c.cachedObject(key)
	defer done()
	if err != nil {
		return err
	}
	obj := e.obj
	if obj == nil {
		c.expect.Absent(expect.Key(key)) // deleted, no longer watched, or not cached yet: nothing to do
		c.stats.Forget(rulestats.Key(key))
		c.fights.Forget(key.queued())
		return nil
	}
	if !c.servable(ctx, e) {
		return nil // its informer lists every object again, and they are synced then
	}
	rv := obj.GetResourceVersion()
	if c.expect.Pending(expect.Key(key), rv) {
		return nil // our last write's echo has not reached the cache yet
	}
	if !c.waitSources(ctx, e.target) {
		return nil // stopping: a restart syncs the object
	}
	d, err := reconcile.Decide(e.target, obj, c.look, c.opts.FieldManager)
	if err != nil {
		return fmt.Errorf("encode patch for %s: %w", key, err)
	}
	if d.Empty() {
		c.report(ctx, key, obj, d, reconcile.StatePending)
		if d.Owns {
			if err := c.opts.Record.Ensure(ctx, key.GVR.GroupResource()); err != nil {
				return fmt.Errorf("%s carries keys the controller owns, but its resource is not recorded: %v", key, err)
			}
		}
		return nil
	}
	change := fight.ChangeOf(d.Change)
	v := c.holdFight(ctx, key, obj, d, change)
	changed := reconcile.StatePending
	if v.Fought {
		changed = reconcile.StateFighting
	}
	c.report(ctx, key, obj, d, changed)
	// Another writer reverts it (back off), or its tenant's writes wait their turn.
	if wait := max(v.Wait, c.opts.Pace.Wait(key.queued(), key.Namespace, d, obj)); wait > 0 {
		c.queue.AddAfter(key.queued(), wait)
		return nil
	}
	return c.write(ctx, key, e, d, change)
}

// write sends the requests of d, whose change hashes to change, that make
// e's object carry what the rules want, and reports the result: a Warning
// event when the server rejects them, else the echo to await, the fight
// detector's write, the per-rule counts, a log line and a Normal event.
func (c *Controller) write(ctx context.Context, key Key, e cachedEntry, d reconcile.Decision, change fight.Change) error {
	// A write in flight is finished even when ctx is cancelled: abandoning
	// it would leave its outcome unknown.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.WriteTimeout)
	defer cancel()
	obj, rv, summary := e.obj, e.obj.GetResourceVersion(), d.Change.Summary()
	res, err := c.writer.Send(wctx, reconcile.Ref(key), d.Requests)
	switch {
	case err != nil:
		if apierrors.IsForbidden(err) {
			e.informer.Forbidden.Store(true)
		}
		if retry.Permanent(err) {
			// The event is about the object: it needs only the server's
			// reason, which Send's error wraps.
			c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "AnnotateFailed", "Patch", "Could not change %s: %v", summary, errors.Unwrap(err))
		}
		return err
	case res.Gone:
		return nil // deleted meanwhile: nothing to do
	}
	e.informer.Forbidden.Store(false)
	c.expect.Record(expect.Key(key), rv, res.ResourceVersion, d.Change, c.expect.Inert(e.target, d.Change))
	if res.ResourceVersion != rv {
		c.fights.Wrote(key.queued(), change)
	}
	c.stats.CountKeys(d)
	// The echo of the write may be dropped unsynced: what it wrote is
	// compliant now.
	c.stats.Record(rulestats.Key(key), rulestats.Of(obj, d, reconcile.StateCompliant))
	if logger := klog.FromContext(ctx).V(2); logger.Enabled() {
		logger.Info("Patched metadata", "key", key.String(), "change", summary)
	}
	c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Annotated", "Patch", "Changed %s", summary)
	return nil
}

// cachedEntry is an object from an informer's cache, with what its sync
// needs of the informer.
type cachedEntry struct {
	obj      objcache.Object // nil when the object or its informer does not exist
	target   *rules.Target
	informer *informer.Informer
}

// cachedObject returns the object key names from its informer's cache,
// with its target and its informer. Until done is called, the sync counts
// as under way for the prune of key's resource, which waits for it: the
// target it read may be the one before the resource left the rules.
func (c *Controller) cachedObject(key Key) (e cachedEntry, done func(), err error) {
	c.mu.RLock()
	r := c.resources[key.GVR.GroupResource()]
	if r == nil || r.informer == nil || r.informer.GVR != key.GVR {
		c.mu.RUnlock()
		return cachedEntry{}, func() {}, nil
	}
	e.target, e.informer = r.target, r.informer
	r.syncs.Add(1)
	c.mu.RUnlock()
	done = func() { r.syncs.Add(-1) }
	obj, exists, err := e.informer.Informer.GetIndexer().GetByKey(key.storeKey())
	if err != nil || !exists {
		return cachedEntry{}, done, err
	}
	o, ok := obj.(objcache.Object)
	if !ok {
		return cachedEntry{}, done, fmt.Errorf("cached %s is a %T, not an object with metadata", key, obj)
	}
	e.obj = o
	return e, done, nil
}

// report keeps the per-rule gauges — changed is the coverage state of the
// keys d's change writes — and, unless the object opts out, logs
// values that could not be read from it and rules that conflict on it,
// with a Warning event and metrics for conflicts, and reports what rules in
// audit mode would change.
func (c *Controller) report(ctx context.Context, key Key, obj objcache.Object, d reconcile.Decision, changed string) {
	unsetChanged := c.stats.Record(rulestats.Key(key), rulestats.Of(obj, d, changed))
	if d.Ignored != "" {
		return // left alone: the rules' verdicts do not apply
	}
	c.reportAudit(ctx, key, obj, d)
	ev := d.Evaluation
	logger := klog.FromContext(ctx)
	if unsetChanged {
		// Once per object and state: the gauge counts it meanwhile.
		for _, p := range ev.Problems {
			logger.Info("Value not set", "key", key.String(), "reason", p)
		}
	}
	for _, cf := range ev.Conflicts {
		logger.Info("Rules conflict; file order decides", "key", key.String(), cf.Kind, cf.Key, "kept", cf.Kept, "dropped", cf.Dropped)
		c.opts.Metrics.Conflicts.WithLabelValues(key.GVR.GroupResource().String()).Inc()
		c.opts.Metrics.PerRule.Conflicts.WithLabelValues(cf.Kept).Inc()
		c.opts.Metrics.PerRule.Conflicts.WithLabelValues(cf.Dropped).Inc()
		c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "RulesConflict", "Evaluate",
			"Rules %s and %s want different values for %s %s; %s wins (file order)", cf.Kept, cf.Dropped, cf.Kind, cf.Key, cf.Kept)
	}
}

// reportAudit logs, counts and (with events) records what rules in audit
// mode would change on obj; nothing is written for them.
func (c *Controller) reportAudit(ctx context.Context, key Key, obj objcache.Object, d reconcile.Decision) {
	logger := klog.FromContext(ctx).V(1)
	for _, a := range d.Audit {
		summary := a.Change.Summary()
		if logger.Enabled() {
			logger.Info("Audit rule would change object", "key", key.String(), "rule", a.Rule, "change", summary)
		}
		c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "AuditWouldChange", "Audit", "Rule %s (audit mode) would change %s", a.Rule, summary)
	}
}
