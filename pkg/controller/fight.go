package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/fight"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// newFights returns the detector of the objects another writer keeps
// reverting, which keeps m's gauge of objects in a fight.
func newFights(clk clock.PassiveClock, m *metrics.Metrics) *fight.Detector[queued] {
	return fight.NewDetector(clk, func(q queued) {
		m.Fight.Fighting.WithLabelValues(q.resource.Value().GroupResource().String()).Dec()
	})
}

// holdFight is asked before a write of d, whose change hashes to change,
// to obj: it returns the detector's verdict — how long the write must
// wait because the object is in a fight (0 for any other object) — and
// reports a fight that starts,
// goes on, or is joined by another field manager, in a log line, a
// Warning event on obj and metrics.
func (c *Controller) holdFight(ctx context.Context, key Key, obj objcache.Object, d reconcile.Decision, change fight.Change) fight.Verdict {
	v := c.fights.Hold(key.queued(), change)
	if v.Report != fight.None || v.Fought && v.Wait == 0 {
		// A fight reported, or a write in it about to go: whoever
		// reverted the last one may be a manager not seen yet.
		c.reportFight(ctx, key, obj, d, v)
	}
	return v
}

// reportFight names the other field manager that reverted the keys last
// and reports the fight when v says to, or when that manager is new to it.
func (c *Controller) reportFight(ctx context.Context, key Key, obj objcache.Object, d reconcile.Decision, v fight.Verdict) {
	f := fight.Fight{Wait: v.Wait}
	for _, ch := range d.Changes(obj) {
		f.Keys = append(f.Keys, fight.Key{Kind: ch.Kind, Key: ch.Key, Rule: ch.Rule})
	}
	manager := c.otherManager(ctx, key, f.Keys)
	managers, added := c.fights.Saw(key.queued(), manager)
	if v.Report == fight.None && !added {
		return
	}
	f.Managers = managers
	if len(f.Managers) == 0 {
		f.Managers = []string{fight.Unknown}
	}
	f.Manager = f.Managers[0]
	klog.FromContext(ctx).Info("Another field manager reverts the keys the rules set; writes to the object back off",
		"key", key.String(), "manager", manager, "managers", f.Managers, "rules", f.Rules(), "change", d.Change.Summary(),
		"writes", v.Writes+1, "window", fight.Window, "wait", v.Wait, "started", v.Report == fight.Started)
	c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, fight.Reason, fight.Action, "%s", f.Note())
	if v.Report == fight.Started || added {
		for _, r := range f.Rules() {
			c.opts.Metrics.Fight.Fights.WithLabelValues(r, manager).Inc()
		}
	}
	if v.Report == fight.Started {
		c.opts.Metrics.Fight.Fighting.WithLabelValues(key.GVR.GroupResource().String()).Inc()
	}
}

// otherManager names the field manager that keys were last changed by,
// from the object's managedFields, which the cache does not keep: it
// reads them from the API server, once per fight reported and per write
// in a fight.
func (c *Controller) otherManager(ctx context.Context, key Key, keys []fight.Key) string {
	rctx, cancel := context.WithTimeout(ctx, c.opts.WriteTimeout)
	defer cancel()
	m, err := c.metadata.Resource(key.GVR).Namespace(key.Namespace).Get(rctx, key.Name, metav1.GetOptions{})
	if err != nil {
		klog.FromContext(ctx).Info("Cannot read managedFields to name the other field manager", "key", key.String(), "err", err)
		return fight.Unknown
	}
	return fight.OtherManager(m.ManagedFields, c.opts.FieldManager, keys)
}
