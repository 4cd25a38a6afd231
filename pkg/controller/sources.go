package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// The objects rules read besides the objects ruled (source.Source):
// their Namespace, for namespace selectors, fromNamespace, CEL's
// namespaceObject and the opt-out; a Pod's Node, for fromNode. Each
// source that a running target needs (rules.Target.Sources) has one
// informer of its objects' metadata (every label and annotation), never
// sharded, run while a target needs it. The informer of each resource
// whose objects name a source's objects keeps an index by the object each
// names, so that when one arrives, goes, or changes in a way that
// matters to a target (rules.Target.SourceChangeMatters), exactly the
// objects that name it are synced. The rules find the objects through
// sourceCaches, passed to each decision.

// sourcesPoll is how often a sync waiting for a source's initial list
// checks it.
const sourcesPoll = 50 * time.Millisecond

// startSource starts the informer of the objects of src. Its adds of the
// initial list enqueue nothing: no object that names one is synced before
// that list is in the cache (waitSources), and an object synced before
// the informer ran is synced again when the rule that needs it comes in.
// Later, when one of them arrives or goes, the objects that name it are
// synced; when it changes, those of each target that the change matters
// to.
func (c *Controller) startSource(ctx context.Context, src *source.Source) (*informer.Informer, error) {
	ri, err := c.informers.BuildSource(src, c.watchErrorHandler)
	if err != nil {
		return nil, err
	}
	every := func(*rules.Target) bool { return true }
	_, err = ri.Informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if !isInInitialList {
				c.enqueueNaming(src, obj, every)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(objcache.Object)
			n, ok2 := newObj.(objcache.Object)
			if ok1 && ok2 {
				c.enqueueNaming(src, newObj, func(t *rules.Target) bool { return t.SourceChangeMatters(src, o, n) })
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			c.enqueueNaming(src, obj, every)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("informer of %s: event handler: %w", source.GVRString(src.Resource.GVR), err)
	}
	klog.FromContext(ctx).Info("Starting informer", "resource", source.GVRString(src.Resource.GVR), "reason", src.Reason)
	ri.Run(ctx)
	return ri, nil
}

// enqueueNaming enqueues the cached objects that name obj, an object of
// src, of every running target that needs src and that pick picks; for
// an owner, those that the objects it owns name too, down the chain.
func (c *Controller) enqueueNaming(src *source.Source, obj any, pick func(*rules.Target) bool) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	c.enqueueNamingLocked(src, m, pick, nil)
}

// enqueueNamingLocked is enqueueNaming, c.mu held; seen are the UIDs of
// the owners whose objects were enqueued already (nil before the first).
func (c *Controller) enqueueNamingLocked(src *source.Source, m metav1.Object, pick func(*rules.Target) bool, seen map[string]bool) {
	if src.IsOwner {
		if seen == nil {
			seen = map[string]bool{}
		}
		if seen[string(m.GetUID())] {
			return // a loop of ownerReferences
		}
		seen[string(m.GetUID())] = true
		for s, ri := range c.sources {
			for _, o := range ri.Owned(s, m) {
				c.enqueueNamingLocked(s, o, pick, seen)
			}
		}
	}
	for _, r := range c.resources {
		t := r.target
		if r.informer == nil || !src.NamedBy(t.GVR.GroupResource(), t.Namespaced) || !slices.Contains(t.Sources(), src) || !pick(t) {
			continue
		}
		for _, k := range r.informer.Naming(src, m) {
			c.enqueueStoreKey(r.informer.GVR, k)
		}
	}
}

// sourceCaches is the source.Lookup of the controller: the objects of each
// source as its informer caches them. They are shared with the cache:
// read only.
type sourceCaches struct{ c *Controller }

// Find implements source.Lookup.
func (s sourceCaches) Find(src *source.Source, ns, name string) (metav1.Object, bool) {
	s.c.mu.RLock()
	ri := s.c.sources[src]
	s.c.mu.RUnlock()
	return ri.Find(src, ns, name)
}

// runSources starts the informer of each source that the target of a
// running informer, ruled or pruned, needs, and appends to stop those
// that none needs.
func (c *Controller) runSources(ctx context.Context, stop []*informer.Informer) ([]*informer.Informer, error) {
	var needed []*source.Source
	for _, r := range c.resources {
		if r.informer != nil {
			needed = append(needed, r.target.Sources()...)
		}
	}
	for src, ri := range c.sources {
		if !slices.Contains(needed, src) {
			klog.FromContext(ctx).Info("Stopping informer", "resource", source.GVRString(src.Resource.GVR), "reason", "no rule needs "+src.What)
			stop = append(stop, ri)
			delete(c.sources, src)
		}
	}
	for _, src := range source.Union(nil, needed) {
		if c.sources[src] != nil {
			continue
		}
		ri, err := c.startSource(ctx, src)
		if err != nil {
			return stop, err
		}
		if c.sources == nil {
			c.sources = map[*source.Source]*informer.Informer{}
		}
		c.sources[src] = ri
	}
	return stop, nil
}

// sourcesReady reports whether the informers of the sources that the
// objects of t need have listed their objects. (runSources starts them
// under the lock that syncs take to read the cache, so that no object of
// a target that needs one is synced before it runs.) c.mu is not held.
func (c *Controller) sourcesReady(t *rules.Target) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, src := range t.Sources() {
		if ri := c.sources[src]; ri != nil && !ri.Informer.HasSynced() {
			return false
		}
	}
	return true
}

// waitSources waits until sourcesReady(t): before a source's initial
// list, it is not known whether an object's namespace opts out, nor what
// its labels are, and a Node that is not known may yet be listed, so that
// a default set for it would be undone at once. It returns false when
// ctx ends first. (Waiting in the worker, rather than requeueing the
// object, keeps the queue's retry metrics for failures.)
func (c *Controller) waitSources(ctx context.Context, t *rules.Target) bool {
	if c.sourcesReady(t) {
		return true
	}
	err := wait.PollUntilContextCancel(ctx, sourcesPoll, true, func(context.Context) (bool, error) {
		return c.sourcesReady(t), nil
	})
	return err == nil
}

// sourceInformers returns the informers of the sources, for stopAll and
// HasSynced. c.mu is held.
func (c *Controller) sourceInformers() []*informer.Informer {
	out := make([]*informer.Informer, 0, len(c.sources))
	for _, ri := range c.sources {
		out = append(out, ri)
	}
	return out
}
