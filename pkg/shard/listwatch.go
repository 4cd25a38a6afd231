package shard

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Mode says who drops the objects of other shards.
type Mode string

const (
	// Server: the API server applied the shard selector.
	Server Mode = "server"
	// Client: the API server sent every object (it does not know shard
	// selectors, or the feature is off); the replica drops the others.
	Client Mode = "client"
)

// Modes are the modes, for metrics initialised at zero.
var Modes = []Mode{Server, Client}

// listWatch wraps the list and watch of one resource: it sends the shard
// selector, learns from each list answer whether the server applied it,
// and else filters the answer and the watch events.
type listWatch struct {
	inner    *cache.ListWatch
	probe    func(context.Context, metav1.ListOptions) (runtime.Object, error)
	resource string
	selector sharding.Selector
	expr     string
	metrics  *Metrics
	logger   klog.Logger

	mu   sync.Mutex
	mode Mode // "" until the server has answered a list
}

// ListWatch returns lw, the list and watch of gvr in namespace ns, with
// its lists and watches limited to the shard's objects.
func (s *Shard) ListWatch(gvr schema.GroupVersionResource, ns string, lw *cache.ListWatch) *cache.ListWatch {
	resource := gvr.GroupResource().String()
	w := &listWatch{
		inner: lw, resource: resource, selector: s.Ranges().Selector(), metrics: s.metrics,
		logger: s.logger.WithValues("resource", resource),
		probe: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return s.probe(ctx, gvr, ns, o)
		},
	}
	w.expr = w.selector.String()
	return &cache.ListWatch{ListWithContextFunc: w.list, WatchFuncWithContext: w.watch}
}

// list lists with the shard selector and filters the answer unless the
// server did.
func (w *listWatch) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.ShardSelector = w.expr
	obj, err := w.inner.ListWithContextFunc(ctx, opts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractListWithAlloc(obj)
	if err != nil {
		return nil, fmt.Errorf("list of %s: %w", w.resource, err)
	}
	w.metrics.Received.WithLabelValues(w.resource).Add(float64(len(items)))
	applied := shardInfo(obj) != ""
	if !applied {
		if applied, err = w.applies(ctx, opts); err != nil {
			return nil, err
		}
	}
	if w.setMode(applied) == Server {
		return obj, nil
	}
	kept := items[:0]
	for _, item := range items {
		if w.matches(item) {
			kept = append(kept, item)
		}
	}
	if err := meta.SetList(obj, kept); err != nil {
		return nil, fmt.Errorf("list of %s: %w", w.resource, err)
	}
	return obj, nil
}

// watch watches with the shard selector. A watch that streams its initial
// list (sendInitialEvents) has no list answer to tell the mode by: a probe
// does, first.
func (w *listWatch) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if w.currentMode() == "" || (opts.SendInitialEvents != nil && *opts.SendInitialEvents) {
		applied, err := w.applies(ctx, opts)
		if err != nil {
			return nil, err
		}
		w.setMode(applied)
	}
	opts.ShardSelector = w.expr
	wi, err := w.inner.WatchFuncWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	server := w.currentMode() == Server
	return watch.Filter(wi, func(e watch.Event) (watch.Event, bool) {
		switch e.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			w.metrics.Received.WithLabelValues(w.resource).Inc()
			return e, server || w.matches(e.Object)
		}
		return e, true // bookmarks (among them the end of the initial events) and errors
	}), nil
}

// applies asks the API server whether it applies the shard selector, by
// a list of at most one whole object: its answer carries shardInfo when
// it did. (Lists of PartialObjectMetadata, the metadata informers', come
// without it: the server does not copy it into them.)
func (w *listWatch) applies(ctx context.Context, opts metav1.ListOptions) (bool, error) {
	probe := metav1.ListOptions{ShardSelector: w.expr, Limit: 1, LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector}
	obj, err := w.probe(ctx, probe)
	if err != nil {
		return false, fmt.Errorf("shard selector probe of %s: %w", w.resource, err)
	}
	return shardInfo(obj) != "", nil
}

// matches reports whether obj is in this replica's ranges, as the API
// server would decide.
func (w *listWatch) matches(obj runtime.Object) bool {
	ok, err := w.selector.Matches(obj)
	if err != nil {
		w.logger.Error(err, "Cannot tell the shard of an object; keeping it")
		return true
	}
	if !ok {
		w.metrics.Dropped.WithLabelValues(w.resource).Inc()
	}
	return ok
}

// setMode records the mode an answer showed, logging when it changes.
func (w *listWatch) setMode(applied bool) Mode {
	mode := Client
	if applied {
		mode = Server
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if mode != w.mode {
		w.logger.Info("Sharded informer", "mode", mode, "selector", abbreviate(w.expr))
		for _, m := range Modes {
			w.metrics.Mode.WithLabelValues(w.resource, string(m)).Set(boolFloat(m == mode))
		}
		w.mode = mode
	}
	return mode
}

func (w *listWatch) currentMode() Mode {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mode
}

// shardInfo is the shard selector a list answer says the server applied,
// "" if none.
func shardInfo(list runtime.Object) string {
	switch l := list.(type) {
	case *unstructured.UnstructuredList:
		s, _, _ := unstructured.NestedString(l.Object, "metadata", "shardInfo", "selector")
		return s
	case interface{ GetShardInfo() *metav1.ShardInfo }:
		if info := l.GetShardInfo(); info != nil {
			return info.Selector
		}
	}
	return ""
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// abbreviate shortens a selector of many ranges for the log.
func abbreviate(expr string) string {
	const most = 200
	if len(expr) <= most {
		return expr
	}
	return fmt.Sprintf("%s… (%d bytes)", expr[:most], len(expr))
}
