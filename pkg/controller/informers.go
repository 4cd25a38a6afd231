package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/expect"
	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// startInformer starts the informer for t under ctx, on standby if
// standby is set (see informer.Informer.Standby).
func (c *Controller) startInformer(ctx context.Context, t *rules.Target, standby bool) (*informer.Informer, error) {
	ns := ""
	if t.Namespaced {
		ns = c.opts.Namespace
	}
	keep := t.Projection()
	ri, err := c.informers.Build(t.Resource, ns, &keep, informer.SourceIndexers(t), true, c.watchErrorHandler)
	if err != nil {
		return nil, err
	}
	ri.Standby.Store(standby)
	if _, err := ri.Informer.AddEventHandler(ri.UnlessStandby(c.withInitialList(ri, c.handlerFor(klog.FromContext(ctx), t.GVR)))); err != nil {
		return nil, fmt.Errorf("informer of %s: event handler: %w", source.GVRString(t.GVR), err)
	}
	ri.Run(ctx)
	return ri, nil
}

// enqueueAll enqueues every object ri caches.
func (c *Controller) enqueueAll(gvr schema.GroupVersionResource, ri *informer.Informer) {
	for _, k := range ri.Informer.GetStore().ListKeys() {
		c.enqueueStoreKey(gvr, k)
	}
}

// watchErrorHandler logs list and watch errors as client-go does by
// default, notes Forbidden and NotFound in ri, and reports a resource
// that is no longer served, so that its informer is stopped instead of
// retrying a 404 forever: a ruled resource through ResourceGone, a pruned
// one through ri, which the prune check reads. A watch ended by the
// controller's shutdown is no error: it is neither logged nor counted.
func (c *Controller) watchErrorHandler(ri *informer.Informer) cache.WatchErrorHandlerWithContext {
	gvr := ri.GVR
	return func(ctx context.Context, r *cache.Reflector, err error) {
		if ctx.Err() != nil {
			return // shutting down: the watch ended because it was asked to
		}
		c.opts.Metrics.ListWatchErrors.WithLabelValues(gvr.GroupResource().String(), retry.Reason(err)).Inc()
		if apierrors.IsForbidden(err) {
			ri.Forbidden.Store(true)
		}
		if apierrors.IsNotFound(err) {
			ri.Gone.Store(true)
			if pruning := c.prunes(ri); pruning || c.opts.ResourceGone != nil {
				klog.FromContext(ctx).Info("Resource no longer served", "resource", source.GVRString(gvr), "pruning", pruning)
				if !pruning {
					c.opts.ResourceGone(gvr)
				}
				return
			}
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	}
}

// prunes reports whether ri is the informer of a resource being pruned.
// It takes c.mu: no informer is stopped, and so waited for, under c.mu.
func (c *Controller) prunes(ri *informer.Informer) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	r := c.resources[ri.GVR.GroupResource()]
	return r != nil && r.informer == ri && r.phase == pruning
}

// handlerFor returns event handlers that only enqueue keys of gvr. Updates
// that cannot change what sync decides are dropped here: status updates
// are most of a cluster's events. With --resync-period, a resync (an
// update event that carries the same resourceVersion) is always enqueued:
// that is what it is for. Without it, such an event comes only from a
// relist after a watch expired, for an object that has not changed. The
// echo of an inert write of ours, from the version it was decided on, is
// dropped too (expect.Echoes.Echo), and a deletion ends any wait for one.
func (c *Controller) handlerFor(logger klog.Logger, gvr schema.GroupVersionResource) cache.ResourceEventHandlerFuncs {
	enqueue := func(reason string, old, obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			logger.Error(err, "Ignoring event for an object without metadata", "resource", gvr.String())
			return
		}
		key := Key{GVR: gvr, Namespace: m.GetNamespace(), Name: m.GetName()}
		if reason == "delete" {
			c.expect.Forget(expect.Key(key)) // gone: no write of it awaits an echo
		}
		loggerV := logger.V(4)
		if o, ok := old.(metav1.Object); ok && c.expect.Echo(expect.Key(key), o, m) {
			if loggerV.Enabled() {
				loggerV.Info("Dropping the echo of an own write", "key", key.String())
			}
			return // the object is as our write left it: nothing to sync
		}
		if loggerV.Enabled() {
			loggerV.Info("Enqueue", "event", reason, "key", key.String())
		}
		c.queue.Add(key.queued())
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { enqueue("add", nil, obj) },
		UpdateFunc: func(oldObj, newObj any) {
			switch {
			case c.opts.ResyncPeriod > 0 && objcache.IsResync(oldObj, newObj):
				enqueue("resync", nil, newObj)
			case objcache.RelevantUpdate(oldObj, newObj):
				enqueue("update", oldObj, newObj)
			}
		},
		// Nothing is done for a deleted object, but sync drops what it
		// remembered about it, and no write of it awaits an echo.
		DeleteFunc: func(obj any) { enqueue("delete", nil, obj) },
	}
}

// servable reports whether the cache keeps what e's target needs of e.obj
// (objcache.Serves). When it does not, the informer is marked stale and
// built again at once, listing every object, whose adds sync them.
func (c *Controller) servable(ctx context.Context, e cachedEntry) bool {
	if objcache.Serves(e.obj, e.target.Projection) {
		return true
	}
	if !e.informer.Stale.Swap(true) {
		klog.FromContext(ctx).Info("Cache lacks a value the rules need; listing again", "resource", source.GVRString(e.informer.GVR))
		if err := c.transition(ctx, observed{}); err != nil {
			c.fail(err)
		}
	}
	return false
}
