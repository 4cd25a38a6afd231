package controller

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// The related objects rules read values from (rules.RelatedSource): a
// Pod's Node, for fromNode. Each source the rules read has an informer of
// its objects' metadata, as namespaces do, run while a rule reads it; the
// informer of the resource whose objects name them (pods) keeps an index
// by the name they give (spec.nodeName), so that when a Node arrives,
// goes, or changes a key a rule reads, the Pods on it are synced.

// relatedIndex is the name of the index, by the related object each
// names, of the informers of the resource whose objects name one.
func relatedIndex(src *rules.RelatedSource) string { return "related:" + src.Field }

// relatedIndexers returns the indexers that the informer of the resource
// gr needs for the related sources: an index by the related object each
// object names, for each source that gr's objects name. It is set whether
// or not a rule reads the source now: an informer whose cache does not
// keep the field that names it indexes nothing, and one built again when
// a rule starts reading it does.
func relatedIndexers(gr schema.GroupResource) cache.Indexers {
	out := cache.Indexers{}
	for _, src := range rules.RelatedSources() {
		if src.For != gr {
			continue
		}
		out[relatedIndex(src)] = func(obj any) ([]string, error) {
			m, ok := obj.(metav1.Object)
			if !ok {
				return nil, nil
			}
			name := src.RefOf(m)
			if name == "" {
				return nil, nil
			}
			return []string{relatedStoreKey(src, m.GetNamespace(), name)}, nil
		}
	}
	return out
}

// relatedStoreKey is the key, in the related objects' informer and in the
// index by related object, of the object of src named name by an object
// in namespace ns.
func relatedStoreKey(src *rules.RelatedSource, ns, name string) string {
	if src.Resource.Namespaced {
		return ns + "/" + name
	}
	return name
}

// startRelated starts the informer of the related objects of src, which
// caches their metadata (every label and annotation), and never sharded:
// an object of any shard may name any of them. When one arrives or goes,
// the objects that name it are synced; when it changes, those of each
// resource whose rules read what changed (rules.Target.RelatedChangeMatters).
func (c *Controller) startRelated(ctx context.Context, src *rules.RelatedSource) (*resourceInformer, error) {
	ri := &resourceInformer{gvr: src.Resource.GVR}
	inf, err := c.newInformer(src.Resource, "", nil, cache.Indexers{}, false, ri)
	if err != nil {
		return nil, err
	}
	every := func(*rules.Target) bool { return true }
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueueRelated(src, obj, every) },
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(objcache.Object)
			n, ok2 := newObj.(objcache.Object)
			if ok1 && ok2 {
				c.enqueueRelated(src, newObj, func(t *rules.Target) bool { return t.RelatedChangeMatters(src, o, n) })
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			c.enqueueRelated(src, obj, every)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("informer of %s: event handler: %w", rules.GVRString(src.Resource.GVR), err)
	}
	klog.FromContext(ctx).Info("Starting informer", "resource", rules.GVRString(src.Resource.GVR), "reason", "rules read values with "+src.Field)
	ri.run(ctx, inf)
	return ri, nil
}

// enqueueRelated enqueues the cached objects that name obj, an object of
// src, of every resource whose rules read src and that pick picks.
func (c *Controller) enqueueRelated(src *rules.RelatedSource, obj any, pick func(*rules.Target) bool) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	key := relatedStoreKey(src, m.GetNamespace(), m.GetName())
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, r := range c.resources {
		if r.informer == nil || !slices.Contains(r.target.RelatedSources(), src) || !pick(r.target) {
			continue
		}
		gvr := r.informer.gvr
		keys, err := r.informer.informer.GetIndexer().IndexKeys(relatedIndex(src), key)
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("objects of %s naming %s %s: %w", rules.GVRString(gvr), src.Resource.Kind, key, err))
			continue
		}
		for _, k := range keys {
			c.enqueueStoreKey(gvr, k)
		}
	}
}

// relatedLookup returns how the rules find the related objects of src:
// in the cache of its informer.
func (c *Controller) relatedLookup(src *rules.RelatedSource) rules.Related {
	return func(ns, name string) (metav1.Object, bool) {
		c.mu.RLock()
		ri := c.related[src.Field]
		c.mu.RUnlock()
		if ri == nil {
			return nil, false
		}
		obj, ok, err := ri.informer.GetStore().GetByKey(relatedStoreKey(src, ns, name))
		if err != nil || !ok {
			return nil, false
		}
		m, ok := obj.(metav1.Object)
		return m, ok
	}
}

// relate makes the rules of set read the related objects from the
// controller's caches of them.
func (c *Controller) relate(set *rules.Set) {
	for _, src := range rules.RelatedSources() {
		set.Relate(src, c.relatedLookup(src))
	}
}

// runRelated starts the informer of each related source that the target
// of a running informer reads, and appends to stop those that none reads.
func (c *Controller) runRelated(ctx context.Context, stop []*resourceInformer) ([]*resourceInformer, error) {
	for _, src := range rules.RelatedSources() {
		need := false
		for _, r := range c.resources {
			need = need || r.informer != nil && slices.Contains(r.target.RelatedSources(), src)
		}
		ri := c.related[src.Field]
		switch {
		case need && ri == nil:
			ri, err := c.startRelated(ctx, src)
			if err != nil {
				return stop, err
			}
			c.related = put(c.related, src.Field, ri)
		case !need && ri != nil:
			klog.FromContext(ctx).Info("Stopping informer", "resource", rules.GVRString(src.Resource.GVR), "reason", "no rule reads values with "+src.Field)
			stop = append(stop, ri)
			delete(c.related, src.Field)
		}
	}
	return stop, nil
}

// relatedReady reports whether the informers of the related objects that
// the rules of t read have listed them. c.mu is not held.
func (c *Controller) relatedReady(t *rules.Target) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, src := range t.RelatedSources() {
		if ri := c.related[src.Field]; ri != nil && !ri.informer.HasSynced() {
			return false
		}
	}
	return true
}

// waitRelated waits until relatedReady(t): before an informer's initial
// list, a Node that is not known may yet be listed, and a default set
// for it would be undone at once. It returns false when ctx ends first.
func (c *Controller) waitRelated(ctx context.Context, t *rules.Target) bool {
	if c.relatedReady(t) {
		return true
	}
	err := wait.PollUntilContextCancel(ctx, namespacesPoll, true, func(context.Context) (bool, error) {
		return c.relatedReady(t), nil
	})
	return err == nil
}

// relatedInformers returns the informers of related objects, for stopAll
// and HasSynced. c.mu is held.
func (c *Controller) relatedInformers() []*resourceInformer {
	out := make([]*resourceInformer, 0, len(c.related))
	for _, ri := range c.related {
		out = append(out, ri)
	}
	return out
}

// put sets m[k] to v, making m when nil.
func put[V any](m map[string]V, k string, v V) map[string]V {
	if m == nil {
		m = map[string]V{}
	}
	m[k] = v
	return m
}
