package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
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
	type current struct {
		ri     *informer.Informer
		target *rules.Target
	}
	c.mu.RLock()
	old := map[schema.GroupResource]current{}
	for gr, r := range c.resources {
		if r.phase == ruled {
			old[gr] = current{r.informer, r.target}
		}
	}
	c.mu.RUnlock()
	fresh := make(map[schema.GroupResource]reshard, len(old))
	stopFresh := func() {
		for _, s := range fresh {
			s.fresh.Stop()
		}
	}
	for gr, cur := range old {
		n, err := c.startInformer(ctx, cur.target, true)
		if err != nil {
			stopFresh()
			return err
		}
		fresh[gr] = reshard{old: cur.ri, fresh: n}
	}
	for _, s := range fresh {
		if !cache.WaitForCacheSync(ctx.Done(), s.fresh.Informer.HasSynced) {
			stopFresh()
			return ctx.Err()
		}
	}
	// update replaces the informers of the resources SetRules did not
	// change meanwhile, and stops the others.
	return c.transition(ctx, observed{resharded: fresh})
}
