package controller

import (
	"context"
	"fmt"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// resourceInformer is the informer of one ruled or pruned resource. Each
// has its own stop so that a resource can be dropped from the rules
// without touching the others.
type resourceInformer struct {
	// gvr is the resource, at the version, that the informer lists.
	gvr schema.GroupVersionResource
	// projection is what the cache keeps of each object: what the rules
	// needed when the informer was built.
	projection rules.Projection
	informer   cache.SharedIndexInformer
	// ctx lives as long as the informer runs; set before it starts.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// gone is set, without c.mu, when a list or watch answered NotFound.
	gone atomic.Bool
	// forbidden is set, without c.mu, when a list, watch or write
	// answered Forbidden, and cleared by a successful write.
	forbidden atomic.Bool
	// projecting is the cache transform of a metadata informer, whose
	// projection widens (widen); nil for an informer of whole objects.
	projecting *objcache.Projecting
	// stale is set, without c.mu, when a cached object lacks the value of
	// a key the rules need: the informer must list its objects again.
	stale atomic.Bool
}

// startInformer starts the informer for t under ctx.
func (c *Controller) startInformer(ctx context.Context, t *rules.Target) (*resourceInformer, error) {
	ns := ""
	if t.Namespaced {
		ns = c.opts.Namespace
	}
	ri := &resourceInformer{gvr: t.GVR, projection: t.Projection()}
	indexers := sourceIndexers(t)
	inf, err := c.newInformer(t.Resource, ns, &ri.projection, indexers, true, ri)
	if err != nil {
		return nil, err
	}
	if _, err := inf.AddEventHandler(c.withInitialList(ri, c.handlerFor(klog.FromContext(ctx), t.GVR))); err != nil {
		return nil, fmt.Errorf("informer of %s: event handler: %w", source.GVRString(t.GVR), err)
	}
	ri.run(ctx, inf)
	return ri, nil
}

// serves reports whether ri can enforce t as it is: it lists t's
// resource at t's version, and its cache keeps what t's rules need.
func (ri *resourceInformer) serves(t *rules.Target) bool {
	return ri.gvr == t.GVR && !ri.cannotServe(t)
}

// enqueueAll enqueues every object ri caches.
func (c *Controller) enqueueAll(gvr schema.GroupVersionResource, ri *resourceInformer) {
	for _, k := range ri.informer.GetStore().ListKeys() {
		c.enqueueStoreKey(gvr, k)
	}
}

// run runs inf, the informer of ri, until ctx ends or ri is stopped.
func (ri *resourceInformer) run(ctx context.Context, inf cache.SharedIndexInformer) {
	ri.ctx, ri.cancel = context.WithCancel(ctx)
	ri.informer, ri.done = inf, make(chan struct{})
	ctx = ri.ctx
	go func() {
		defer close(ri.done)
		inf.RunWithContext(ctx)
	}()
}

// newInformer returns an informer of r in namespace ns ("" for all), with
// its cache transform and watch error handler set: a dynamic informer of
// whole objects when keep says so, else a metadata informer, which lists
// and watches objects as PartialObjectMetadata in protobuf and whose cache
// keeps what keep names of their annotations and labels (all of them when
// keep is nil). Both are built as dynamicinformer and metadatainformer
// build them, except that client-go's log lines about them name the
// resource (metadatainformer's say "*v1.PartialObjectMetadata" for every
// resource) and that, when sharded, their list and watch go through
// Options.Shard, and that a list or watch that gets no answer from the
// API server is sent again after a short pause (retry.UntilAnswered). Both stream their initial
// list when the API server supports it (WatchListClient). The watch error
// handler reports to ri.
func (c *Controller) newInformer(r source.Resource, ns string, keep *rules.Projection, indexers cache.Indexers, sharded bool, ri *resourceInformer) (cache.SharedIndexInformer, error) {
	var lw *cache.ListWatch
	var client any
	var example runtime.Object
	var transform cache.TransformFunc
	if keep != nil && keep.Whole {
		rc := c.client.Resource(r.GVR).Namespace(ns)
		lw = &cache.ListWatch{
			ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rc.List(ctx, o) },
			WatchFuncWithContext: rc.Watch,
		}
		client, example, transform = c.client, &unstructured.Unstructured{}, objcache.ObjectTransform(c.opts.FieldManager, r, keep, c.shared)
	} else {
		rc := c.metadata.Resource(r.GVR).Namespace(ns)
		lw = &cache.ListWatch{
			ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rc.List(ctx, o) },
			WatchFuncWithContext: rc.Watch,
		}
		ri.projecting = objcache.NewProjecting(c.opts.FieldManager, r, keep, c.shared)
		client, example, transform = c.metadata, &metav1.PartialObjectMetadata{}, ri.projecting.Transform
	}
	lw = retry.UntilAnswered(lw, source.GVRString(r.GVR), retry.InformerBackoff)
	if sharded {
		lw = c.opts.Shard(r.GVR, ns, lw)
	}
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), example,
		cache.SharedIndexInformerOptions{ResyncPeriod: c.opts.ResyncPeriod, Indexers: indexers, ObjectDescription: source.GVRString(r.GVR)})
	if err := inf.SetTransform(transform); err != nil {
		return nil, fmt.Errorf("informer of %s: cache transform: %w", source.GVRString(r.GVR), err)
	}
	if err := inf.SetWatchErrorHandlerWithContext(c.watchErrorHandler(r.GVR, ri)); err != nil {
		return nil, fmt.Errorf("informer of %s: watch error handler: %w", source.GVRString(r.GVR), err)
	}
	return inf, nil
}

// stop stops the informer and waits until its watch is closed.
func (ri *resourceInformer) stop() {
	ri.cancel()
	<-ri.done
}

// watchErrorHandler logs list and watch errors as client-go does by
// default, notes Forbidden and NotFound in ri, and reports a resource
// that is no longer served, so that its informer is stopped instead of
// retrying a 404 forever: a ruled resource through ResourceGone, a pruned
// one through ri, which the prune check reads. A watch ended by the
// controller's shutdown is no error: it is neither logged nor counted.
func (c *Controller) watchErrorHandler(gvr schema.GroupVersionResource, ri *resourceInformer) cache.WatchErrorHandlerWithContext {
	return func(ctx context.Context, r *cache.Reflector, err error) {
		if ctx.Err() != nil {
			return // shutting down: the watch ended because it was asked to
		}
		c.opts.Metrics.ListWatchErrors.WithLabelValues(gvr.GroupResource().String(), errorReason(err)).Inc()
		if apierrors.IsForbidden(err) {
			ri.forbidden.Store(true)
		}
		if apierrors.IsNotFound(err) {
			ri.gone.Store(true)
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
func (c *Controller) prunes(ri *resourceInformer) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	r := c.resources[ri.gvr.GroupResource()]
	return r != nil && r.informer == ri && r.phase == pruning
}

// errorReason is the API server's reason for err, e.g. Forbidden, or
// Unknown when err carries none (the server did not answer).
func errorReason(err error) string {
	if reason := apierrors.ReasonForError(err); reason != metav1.StatusReasonUnknown {
		return string(reason)
	}
	return "Unknown"
}

// handlerFor returns event handlers that only enqueue keys of gvr. Updates
// that cannot change what sync decides are dropped here: status updates
// are most of a cluster's events. With --resync-period, a resync (an
// update event that carries the same resourceVersion) is always enqueued:
// that is what it is for. Without it, such an event comes only from a
// relist after a watch expired, for an object that has not changed.
func (c *Controller) handlerFor(logger klog.Logger, gvr schema.GroupVersionResource) cache.ResourceEventHandlerFuncs {
	enqueue := func(reason string, obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			logger.Error(err, "Ignoring event for an object without metadata", "resource", gvr.String())
			return
		}
		key := Key{GVR: gvr, Namespace: m.GetNamespace(), Name: m.GetName()}
		if loggerV := logger.V(4); loggerV.Enabled() {
			loggerV.Info("Enqueue", "event", reason, "key", key.String())
		}
		c.queue.Add(key.queued())
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { enqueue("add", obj) },
		UpdateFunc: func(oldObj, newObj any) {
			switch {
			case c.opts.ResyncPeriod > 0 && objcache.IsResync(oldObj, newObj):
				enqueue("resync", newObj)
			case objcache.RelevantUpdate(oldObj, newObj):
				enqueue("update", newObj)
			}
		},
		// Nothing is done for a deleted object, but sync drops what it
		// remembered about it.
		DeleteFunc: func(obj any) { enqueue("delete", obj) },
	}
}

// widen makes the metadata cache of ri keep, from now on, what t's rules
// need besides what it keeps, instead of listing every object again: the
// objects it cached before keep what they kept, and remember which keys
// they dropped. For the usual reload, one whose rules set a key the
// objects do not carry yet, that is enough: the key is known to be absent.
// A sync that finds an object which carried a key the rules now need, and
// so lacks its value, marks ri stale and has it built again (servable). It
// reports false when the cache must be built again now: it keeps, or t's
// rules read, whole objects, or it is stale. c.mu is held.
func (ri *resourceInformer) widen(ctx context.Context, t *rules.Target) bool {
	if ri.projecting == nil || ri.gvr != t.GVR || ri.projection.Whole || t.ReadsObjects || ri.stale.Load() {
		return false
	}
	need := t.Projection()
	p := rules.Projection{Annotations: ri.projection.Annotations.Union(need.Annotations), Labels: ri.projection.Labels.Union(need.Labels)}
	ri.projecting.Widen(p)
	ri.projection = p
	klog.FromContext(ctx).Info("Widening cache", "resource", source.GVRString(t.GVR), "annotations", sets.List(p.Annotations), "labels", sets.List(p.Labels))
	return true
}

// servable reports whether the cache keeps what e's target needs of e.obj
// (objcache.Serves). When it does not, the informer is marked stale and
// built again at once, listing every object, whose adds sync them.
func (c *Controller) servable(ctx context.Context, e cachedEntry) bool {
	if objcache.Serves(e.obj, e.target.Projection) {
		return true
	}
	if !e.informer.stale.Swap(true) {
		klog.FromContext(ctx).Info("Cache lacks a value the rules need; listing again", "resource", source.GVRString(e.informer.gvr))
		if err := c.transition(ctx, observed{}); err != nil {
			c.fail(err)
		}
	}
	return false
}

// servesAll reports whether every object ri caches serves need
// (objcache.Serves).
func (ri *resourceInformer) servesAll(need func() rules.Projection) bool {
	for _, obj := range ri.informer.GetStore().List() {
		if o, ok := obj.(objcache.Object); ok && !objcache.Serves(o, need) {
			return false
		}
	}
	return true
}

// cannotServe reports whether the cache of ri lacks what t's rules need:
// keys, or whole objects, its projection did not keep. It must then be
// built again, listing every object. A cache of whole objects cannot
// serve rules that need only metadata either: it would keep them whole.
// A cache that keeps more than t needs serves t as it is: the keys no
// rule needs any more go when it is next built.
func (ri *resourceInformer) cannotServe(t *rules.Target) bool {
	return ri.projection.Whole != t.ReadsObjects || !ri.keeps(t) || ri.stale.Load()
}

// keeps reports whether the cache of ri keeps all that t's rules read.
func (ri *resourceInformer) keeps(t *rules.Target) bool { return ri.projection.Covers(t.Projection()) }
