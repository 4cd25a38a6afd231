package informer

import (
	"context"
	"slices"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Informer is the informer of one ruled or pruned resource, or of a
// source's objects. Each has its own stop so that a resource can be
// dropped from the rules without touching the others.
type Informer struct {
	// GVR is the resource, at the version, that the informer lists.
	GVR schema.GroupVersionResource
	// Projection is what the cache keeps of each object: what the rules
	// needed when the informer was built.
	Projection projection.Projection
	// Informer lists and watches the objects, and caches them.
	Informer cache.SharedIndexInformer
	// Gone is set when a list or watch answered NotFound.
	Gone atomic.Bool
	// Forbidden is set when a list, watch or write answered Forbidden,
	// and cleared by a successful write.
	Forbidden atomic.Bool
	// Projecting is the cache transform of a metadata informer, whose
	// projection widens (Widen); nil for an informer of whole objects.
	Projecting *objcache.Projecting
	// Stale is set when a cached object lacks the value of a key the
	// rules need: the informer must list its objects again.
	Stale atomic.Bool
	// Standby is set while the informer is built to replace another and
	// does not serve yet (a reshard), and once it is replaced or to be
	// stopped. The informer that serves sees the same events: those of an
	// informer on standby are not acted on, lest one consume the echo of a
	// write that the serving cache has yet to see.
	Standby atomic.Bool

	// ctx lives as long as the informer runs; set before it starts.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// Run runs the informer until ctx ends or it is stopped.
func (ri *Informer) Run(ctx context.Context) {
	ri.ctx, ri.cancel = context.WithCancel(ctx)
	ri.done = make(chan struct{})
	ctx, inf := ri.ctx, ri.Informer
	go func() {
		defer close(ri.done)
		inf.RunWithContext(ctx)
	}()
}

// UnlessStandby returns h, less the events that reach it while ri is on
// standby (Standby).
func (ri *Informer) UnlessStandby(h cache.ResourceEventHandler) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if !ri.Standby.Load() {
				h.OnAdd(obj, isInInitialList)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if !ri.Standby.Load() {
				h.OnUpdate(oldObj, newObj)
			}
		},
		DeleteFunc: func(obj any) {
			if !ri.Standby.Load() {
				h.OnDelete(obj)
			}
		},
	}
}

// Context is the context the informer runs under: it ends when the
// informer stops.
func (ri *Informer) Context() context.Context { return ri.ctx }

// Stop stops the informer and waits until its watch is closed. An
// informer that never ran has nothing to stop.
func (ri *Informer) Stop() {
	if ri.cancel == nil {
		return
	}
	ri.cancel()
	<-ri.done
}

// Serves reports whether ri can enforce t as it is: it lists t's
// resource at t's version, and its cache keeps what t's rules need.
func (ri *Informer) Serves(t *rules.Target) bool {
	return ri.GVR == t.GVR && !ri.cannotServe(t)
}

// Widen makes the metadata cache of ri keep, from now on, what t's rules
// need besides what it keeps, instead of listing every object again: the
// objects it cached before keep what they kept, and remember which keys
// they dropped. For the usual reload, one whose rules set a key the
// objects do not carry yet, that is enough: the key is known to be absent.
// A sync that finds an object which carried a key the rules now need, and
// so lacks its value, marks ri stale and has it built again. It reports
// false when the cache must be built again now: it keeps, or t's rules
// read, whole objects, or it is stale. Its caller serializes it with
// every other reader of Projection.
func (ri *Informer) Widen(ctx context.Context, t *rules.Target) bool {
	need := t.Projection()
	if ri.Projecting == nil || ri.GVR != t.GVR || ri.Projection.Whole || t.ReadsObjects || ri.Stale.Load() || need.Owners && !ri.Projection.Owners {
		return false
	}
	p := projection.Projection{Annotations: ri.Projection.Annotations.Union(need.Annotations), Labels: ri.Projection.Labels.Union(need.Labels), Owners: ri.Projection.Owners}
	ri.Projecting.Widen(p)
	ri.Projection = p
	klog.FromContext(ctx).Info("Widening cache", "resource", source.GVRString(t.GVR), "annotations", sets.List(p.Annotations), "labels", sets.List(p.Labels))
	return true
}

// ServesAll reports whether every object ri caches serves need
// (objcache.Serves).
func (ri *Informer) ServesAll(need func() projection.Projection) bool {
	for _, obj := range ri.Informer.GetStore().List() {
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
func (ri *Informer) cannotServe(t *rules.Target) bool {
	return ri.Projection.Whole != t.ReadsObjects || !ri.keeps(t) || ri.Stale.Load() || !ri.indexes(t)
}

// indexes reports whether ri has the indexes t's rules need: by owner,
// when they read owners (a cache that keeps the owners has it), and by
// the object referred to, for each source of fromRef they read.
func (ri *Informer) indexes(t *rules.Target) bool {
	have := ri.Informer.GetIndexer().GetIndexers()
	_, ok := have[OwnerIndex]
	return (ok || !slices.ContainsFunc(t.Sources(), func(s *source.Source) bool { return s.IsOwner })) && indexesRefs(t, have)
}

// keeps reports whether the cache of ri keeps all that t's rules read.
func (ri *Informer) keeps(t *rules.Target) bool { return ri.Projection.Covers(t.Projection()) }
