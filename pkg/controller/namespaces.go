package controller

import (
	"context"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// startNamespaces starts the informer that keeps namespace labels for
// rules with a namespaceSelector. When a namespace's labels change, every
// object in it of a resource that selects by namespace labels is synced.
func (c *Controller) startNamespaces(ctx context.Context) (*resourceInformer, error) {
	inf, err := c.newInformer(rules.Resource{GVR: namespacesGVR, Kind: "Namespace"}, "", nil, cache.Indexers{}, false)
	if err != nil {
		return nil, err
	}
	enqueueNamespace := func(obj any) {
		m, ok := obj.(cached)
		if !ok {
			return
		}
		c.mu.RLock()
		defer c.mu.RUnlock()
		for gvr, ri := range c.informers {
			if !ri.target.NeedsNamespaceLabels {
				continue
			}
			keys, err := ri.informer.GetIndexer().IndexKeys(cache.NamespaceIndex, m.GetName())
			if err != nil {
				utilruntime.HandleError(fmt.Errorf("objects of %s in namespace %s: %w", rules.GVRString(gvr), m.GetName(), err))
				continue
			}
			for _, k := range keys {
				c.enqueueStoreKey(gvr, k)
			}
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
	return runInformer(ctx, nil, inf), nil
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
