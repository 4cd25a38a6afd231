package controller

import (
	"context"
	"time"

	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"k8s.io/klog/v2"
)

// retryLater schedules key, whose sync failed with the transient err, to
// be synced again: it logs the failure through the failure log, tells the
// rate limiter why it failed, and requeues key after the limiter's delay.
func (c *Controller) retryLater(ctx context.Context, key Key, err error) {
	q := key.queued()
	c.failures.Failed(klog.FromContext(ctx), key.GVR.GroupResource().String(), key, err, c.queue.NumRequeues(q))
	c.limiter.Failed(q, err)
	c.queue.AddRateLimited(q)
}

// observeWrite is told the result of every write. A write the API server
// answered, even with an error, shows it reachable: the objects that wait
// because it was not are retried at once.
func (c *Controller) observeWrite(err error) {
	if retry.Unreachable(err) {
		return
	}
	for _, k := range c.limiter.Reachable() {
		// The shortest positive delay: the queue then moves the wait key
		// already has forward, where Add would leave it to sync key again.
		c.queue.AddAfter(k, time.Nanosecond)
	}
}
