package controller

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

// Activity returns how many objects have been decided since the start —
// synced by a worker, or settled in the event handler as their informer's
// initial list delivered them — and how many keys wait in the work queue:
// what tells a burst of work (a first convergence, a start on a converged
// cluster, a reload) from the quiet after it.
func (c *Controller) Activity() (syncs uint64, queued int) {
	return c.syncs.Load(), c.queue.Len()
}
