package controller

import (
	"context"
	"maps"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Reshard replaces the informer of every ruled resource by a new one,
// whose list and watch go through Options.Shard again, so that it caches
// the objects of the shard's current ranges. The old informer serves until
// the new one has synced; then every object of the new one is enqueued, as
// the objects of ranges new to this replica may need writing. Reshard
// returns once every informer is replaced, or ctx's error. ctx must live
// as long as the context given to SetRules. The informers of pruned
// resources are left as they are: they may never sync (their resource is
// no longer served), and a shard leaves a pruned resource in the record,
// so that every shard prunes it again when it starts.
func (c *Controller) Reshard(ctx context.Context) error {
	c.mu.RLock()
	old := maps.Clone(c.informers)
	c.mu.RUnlock()
	fresh := make(map[schema.GroupVersionResource]*resourceInformer, len(old))
	stopFresh := func() {
		for _, ri := range fresh {
			ri.stop()
		}
	}
	for gvr, ri := range old {
		if ri.status.pruning.Load() {
			continue
		}
		n, err := c.startInformer(ctx, ri.target, false)
		if err != nil {
			stopFresh()
			return err
		}
		fresh[gvr] = n
	}
	for _, ri := range fresh {
		if !cache.WaitForCacheSync(ctx.Done(), ri.informer.HasSynced) {
			stopFresh()
			return ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for gvr, ri := range fresh {
		current := c.informers[gvr]
		if current != old[gvr] || ri.cannotServe(current.target) || current.status.pruning.Load() {
			ri.stop() // SetRules replaced, dropped or pruned it meanwhile
			continue
		}
		ri.target = current.target
		c.informers[gvr] = ri
		current.stop()
		for _, k := range ri.informer.GetStore().ListKeys() {
			c.enqueueStoreKey(gvr, k)
		}
	}
	return nil
}
