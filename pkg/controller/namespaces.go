package controller

import (
	"context"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// startNamespaces starts the informer that keeps namespace labels for
// rules with a namespaceSelector. When a namespace's labels change, every
// object in it of a resource that selects by namespace labels is synced.
//
// Its event handlers only queue the namespace's name: finding the
// namespace's objects takes c.mu, which SetRules holds while it waits for
// this informer to stop, and the informer cannot stop while a handler
// waits. A goroutine of its own, which nothing waits for, finds them.
func (c *Controller) startNamespaces(ctx context.Context) (*resourceInformer, error) {
	inf, err := c.newInformer(rules.Resource{GVR: namespacesGVR, Kind: "Namespace"}, "", nil, cache.Indexers{}, false)
	if err != nil {
		return nil, err
	}
	changed := workqueue.NewTyped[string]()
	enqueueNamespace := func(obj any) {
		if m, ok := obj.(cached); ok {
			changed.Add(m.GetName())
		}
	}
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueNamespace,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(cached)
			n, ok2 := newObj.(cached)
			if ok1 && ok2 && !maps.Equal(o.GetLabels(), n.GetLabels()) {
				enqueueNamespace(newObj)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("namespace informer: event handler: %w", err)
	}
	klog.FromContext(ctx).Info("Starting namespace informer", "reason", "a rule selects by namespace labels")
	ri := runInformer(ctx, nil, inf)
	go func() {
		<-ri.done
		changed.ShutDown()
	}()
	go func() {
		for {
			ns, shutdown := changed.Get()
			if shutdown {
				return
			}
			c.enqueueNamespace(ns)
			changed.Done(ns)
		}
	}()
	return ri, nil
}

// enqueueNamespace enqueues the objects in namespace ns of every resource
// that selects by namespace labels.
func (c *Controller) enqueueNamespace(ns string) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for gvr, ri := range c.informers {
		if !ri.target.NeedsNamespaceLabels {
			continue
		}
		keys, err := ri.informer.GetIndexer().IndexKeys(cache.NamespaceIndex, ns)
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("objects of %s in namespace %s: %w", rules.GVRString(gvr), ns, err))
			continue
		}
		for _, k := range keys {
			c.enqueueStoreKey(gvr, k)
		}
	}
}

// namespaceLabels returns a namespace's labels from the namespace informer.
func (c *Controller) namespaceLabels(namespace string) (labels.Set, bool) {
	c.mu.RLock()
	ns := c.namespaces
	c.mu.RUnlock()
	if ns == nil {
		return nil, false
	}
	obj, ok, err := ns.informer.GetStore().GetByKey(namespace)
	if err != nil || !ok {
		return nil, false
	}
	m, ok := obj.(cached)
	if !ok {
		return nil, false
	}
	return labels.Set(m.GetLabels()), true // shared with the cache: read only
}
