package controller

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// namespacesPoll is how often a sync waiting for the namespace informer's
// initial list checks it.
const namespacesPoll = 50 * time.Millisecond

// startNamespaces starts the informer that keeps the namespaces' labels,
// for rules with a namespaceSelector, and annotations, for namespaces that
// opt out, and the keys rules read from namespaces (fromNamespace). When
// a namespace changes in a way that can change what a resource's rules
// want (rules.Target.NamespaceChangeMatters), every object in it of that
// resource is synced; when it opts in or out, every ruled object in it is.
func (c *Controller) startNamespaces(ctx context.Context) (*resourceInformer, error) {
	ri := &resourceInformer{gvr: namespacesGVR}
	inf, err := c.newInformer(rules.Resource{GVR: namespacesGVR, Kind: "Namespace"}, "", nil, cache.Indexers{}, false, ri)
	if err != nil {
		return nil, err
	}
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		// No object is synced before the initial list of namespaces is
		// in the cache (waitNamespaces): its adds change no decision.
		AddFunc: func(obj any, isInInitialList bool) {
			if !isInInitialList {
				c.enqueueNamespace(obj, everyTarget)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(objcache.Object)
			n, ok2 := newObj.(objcache.Object)
			switch {
			case !ok1 || !ok2:
			case rules.OptsOut(o.GetAnnotations()) != rules.OptsOut(n.GetAnnotations()):
				c.enqueueNamespace(newObj, everyTarget)
			default:
				c.enqueueNamespace(newObj, func(t *rules.Target) bool { return t.NamespaceChangeMatters(o, n) })
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("namespace informer: event handler: %w", err)
	}
	klog.FromContext(ctx).Info("Starting namespace informer", "reason", "rules select by namespace labels, or namespaces may opt out")
	ri.run(ctx, inf)
	return ri, nil
}

// everyTarget picks every ruled resource, for enqueueNamespace.
func everyTarget(*rules.Target) bool { return true }

// enqueueNamespace enqueues the cached objects in namespace obj of every
// namespaced ruled resource that pick picks.
func (c *Controller) enqueueNamespace(obj any, pick func(*rules.Target) bool) {
	m, ok := obj.(objcache.Object)
	if !ok {
		return
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, r := range c.resources {
		if r.informer == nil || !r.target.Namespaced || !pick(r.target) {
			continue
		}
		gvr := r.informer.gvr
		keys, err := r.informer.informer.GetIndexer().IndexKeys(cache.NamespaceIndex, m.GetName())
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("objects of %s in namespace %s: %w", rules.GVRString(gvr), m.GetName(), err))
			continue
		}
		for _, k := range keys {
			c.enqueueStoreKey(gvr, k)
		}
	}
}

// namespace returns a namespace from the namespace informer.
func (c *Controller) namespace(name string) objcache.Object {
	c.mu.RLock()
	ns := c.namespaces
	c.mu.RUnlock()
	if ns == nil {
		return nil
	}
	obj, ok, err := ns.informer.GetStore().GetByKey(name)
	if err != nil || !ok {
		return nil
	}
	m, _ := obj.(objcache.Object)
	return m
}

// namespaceLabels returns a namespace, for its labels and annotations,
// from the namespace informer. It is shared with the cache: read only.
func (c *Controller) namespaceLabels(namespace string) (metav1.Object, bool) {
	m := c.namespace(namespace)
	if m == nil {
		return nil, false
	}
	return m, true
}

// namespaceIgnored reports whether a namespace opts out of the rules.
func (c *Controller) namespaceIgnored(namespace string) bool {
	m := c.namespace(namespace)
	return m != nil && rules.OptsOut(m.GetAnnotations())
}

// namespacesReady reports whether the namespace informer, when it runs
// for the objects of t, has listed the namespaces. (SetRules starts it
// under the lock that syncs take to read the cache, so that no object of a
// resource that needs it is synced before it runs.)
func (c *Controller) namespacesReady(t *rules.Target) bool {
	if !t.NeedsNamespaces() {
		return true
	}
	c.mu.RLock()
	ns := c.namespaces
	c.mu.RUnlock()
	return ns == nil || ns.informer.HasSynced()
}

// waitNamespaces waits until namespacesReady(t): before the namespace
// informer's initial list, it is not known whether an object's namespace
// opts out, nor what its labels are. It returns false when ctx ends first.
// (Waiting in the worker, rather than requeueing the object, keeps the
// queue's retry metrics for failures.)
func (c *Controller) waitNamespaces(ctx context.Context, t *rules.Target) bool {
	err := wait.PollUntilContextCancel(ctx, namespacesPoll, true, func(context.Context) (bool, error) {
		return c.namespacesReady(t), nil
	})
	return err == nil
}
