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
