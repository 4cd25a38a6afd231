package controller

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/controller/expect"
	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// The objects of an informer's initial list that already carry what the
// rules want are decided where they arrive, in the event handler, and not
// enqueued. After a restart on a converged cluster the work queue then
// stays empty: client-go's queue keeps its maps at the size of its largest
// burst once drained (over 100 bytes per object), and each enqueued object
// costs a worker's Get, Done and Forget, all to send nothing.

// withInitialList returns h, whose adds enqueue, with adds of ri's initial
// list that settled takes as decided not enqueued.
func (c *Controller) withInitialList(ri *informer.Informer, h cache.ResourceEventHandlerFuncs) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if isInInitialList && !c.enqueueInitialList && c.settled(ri, obj) {
				return
			}
			h.AddFunc(obj)
		},
		UpdateFunc: h.UpdateFunc,
		DeleteFunc: h.DeleteFunc,
	}
}

// settled reports whether obj, an object of ri's initial list, is one a
// sync would leave as it is, having done what that sync does: with the
// same decision (reconcile.Decide on the cached object, against the
// target in force), nothing changes, and its resource is recorded if the
// object carries keys the controller owns. It then reports the object as
// a sync does (per-rule gauges, audit-mode changes, values not read,
// conflicts) and counts a successful sync. In doubt it reports false and
// the object is enqueued: ri does not (yet) serve a ruled resource, the
// cache does not keep what the target needs of obj, a write's echo is
// awaited, the resource is not recorded yet, or ri stops before the
// namespaces are listed.
func (c *Controller) settled(ri *informer.Informer, obj any) bool {
	o, ok := obj.(objcache.Object)
	if !ok {
		return false
	}
	key := Key{GVR: ri.GVR, Namespace: o.GetNamespace(), Name: o.GetName()}
	t := c.ruledBy(ri)
	if t == nil || !c.waitSources(ri.Context(), t) {
		return false
	}
	if !objcache.Serves(o, t.Projection) || c.expect.Pending(expect.Key(key), o.GetResourceVersion()) {
		return false
	}
	d, err := reconcile.Decide(t, o, c.look, c.opts.FieldManager)
	if err != nil || !d.Empty() || d.Owns && !c.recorded(ri.GVR.GroupResource()) || c.ruledBy(ri) != t {
		return false
	}
	c.report(ri.Context(), key, o, d, reconcile.StatePending)
	c.opts.Metrics.CountSync(key.GVR.GroupResource().String(), nil)
	return true
}

// ruledBy returns the target ri enforces, or nil when ri is not the
// informer of a ruled resource.
func (c *Controller) ruledBy(ri *informer.Informer) *rules.Target {
	c.mu.RLock()
	defer c.mu.RUnlock()
	r := c.resources[ri.GVR.GroupResource()]
	if r == nil || r.informer != ri || r.phase != ruled {
		return nil
	}
	return r.target
}

// recorded reports whether gr needs no recording: the record lists it,
// or there is no record.
func (c *Controller) recorded(gr schema.GroupResource) bool {
	if _, none := c.opts.Record.(noRecord); none {
		return true
	}
	return slices.Contains(c.opts.Record.Recorded(), gr)
}
