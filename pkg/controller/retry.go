package controller

import (
	"context"
	"time"

	"k8s.io/klog/v2"
)

// retryLater schedules key, whose sync failed with the transient err, to
// be synced again: it logs the failure through the failure log, tells the
// rate limiter why it failed, and requeues key after the limiter's delay.
func (c *Controller) retryLater(ctx context.Context, key Key, err error) {
	q := key.queued()
	c.failures.failed(klog.FromContext(ctx), key, err, c.queue.NumRequeues(q))
	c.limiter.failed(q, err)
	c.queue.AddRateLimited(q)
}

// observeWrite is told the result of every write. A write the API server
// answered, even with an error, shows it reachable: the objects that wait
// because it was not are retried at once.
func (c *Controller) observeWrite(err error) {
	if unreachable(err) {
		return
	}
	for _, k := range c.limiter.reachable() {
		// The shortest positive delay: the queue then moves the wait key
		// already has forward, where Add would leave it to sync key again.
		c.queue.AddAfter(k, time.Nanosecond)
	}
}
