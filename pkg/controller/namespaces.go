package controller

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// startNamespaces starts the informer that keeps namespace labels for
// rules with a namespaceSelector. When a namespace's labels change, every
// object in it of a resource that selects by namespace labels is synced.
func (c *Controller) startNamespaces(ctx context.Context) *resourceInformer {
	inf := dynamicinformer.NewFilteredDynamicInformer(c.client, namespacesGVR, "", 0, cache.Indexers{}, nil).Informer()
	_ = inf.SetTransform(transform(c.opts.FieldManager, false))
	enqueueNamespace := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		c.mu.RLock()
		defer c.mu.RUnlock()
		for gvr, ri := range c.informers {
			if !ri.target.NeedsNamespaceLabels {
				continue
			}
			keys, _ := ri.informer.GetIndexer().IndexKeys(cache.NamespaceIndex, u.GetName())
			for _, k := range keys {
				c.enqueueStoreKey(gvr, k)
			}
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueNamespace,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*unstructured.Unstructured)
			n, ok2 := newObj.(*unstructured.Unstructured)
			if ok1 && ok2 && !reflect.DeepEqual(metadataField(o, "labels"), metadataField(n, "labels")) {
				enqueueNamespace(newObj)
			}
		},
	})
	ctx, cancel := context.WithCancel(ctx)
	ri := &resourceInformer{informer: inf, cancel: cancel, done: make(chan struct{})}
	klog.FromContext(ctx).Info("Starting namespace informer", "reason", "a rule selects by namespace labels")
	go func() {
		defer close(ri.done)
		inf.RunWithContext(ctx)
	}()
	return ri
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
	u, _ := obj.(*unstructured.Unstructured)
	if u == nil {
		return nil, false
	}
	out := labels.Set{}
	for k, v := range stringMap(u, "labels") {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out, true
}
