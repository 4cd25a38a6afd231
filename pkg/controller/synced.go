package controller

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// HasSynced reports whether the controller has been given its rules and
// the informer of every ruled resource has completed its initial list.
// Before the first SetRules there are no informers to wait for, yet
// nothing is cached: not synced. Those of pruned resources do not count:
// a prune that waits does not keep the rules from being enforced.
func (c *Controller) HasSynced() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.given {
		return false
	}
	for _, r := range c.resources {
		if r.phase == ruled && !r.informer.Informer.HasSynced() {
			return false
		}
	}
	for _, ri := range c.sourceInformers() {
		if !ri.Informer.HasSynced() {
			return false
		}
	}
	return true
}

// Informers returns the number of running informers, pruning ones
// included.
func (c *Controller) Informers() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for _, r := range c.resources {
		if r.informer != nil {
			n++
		}
	}
	return n
}

// watchSynced logs when every informer has synced and keeps the
// informer gauges current, and the coverage gauge hidden until then.
func (c *Controller) watchSynced(ctx context.Context) {
	logged := false
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		c.mu.RLock()
		running, synced := 0, 0
		for _, r := range c.resources {
			if r.informer == nil {
				continue
			}
			running++
			if r.informer.Informer.HasSynced() {
				synced++
			}
		}
		c.mu.RUnlock()
		c.opts.Metrics.Informers.Set(float64(running))
		c.opts.Metrics.InformersSynced.Set(float64(synced))
		c.opts.Metrics.PerRule.Coverage.SetSynced(c.HasSynced())
		if synced == running && !logged {
			klog.FromContext(ctx).Info("Caches synced", "informers", running)
		}
		logged = synced == running
	}, 200*time.Millisecond)
}

// CachedObjects is the number of objects in the caches of the ruled
// resources' informers: with sharding, this replica's share.
func (c *Controller) CachedObjects() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for _, r := range c.resources {
		if r.informer != nil {
			n += len(r.informer.Informer.GetStore().ListKeys())
		}
	}
	return n
}
