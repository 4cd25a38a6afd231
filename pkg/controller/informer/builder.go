package informer

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Builder builds the informers of one controller. Every field is set.
type Builder struct {
	// Client lists and watches whole objects.
	Client dynamic.Interface
	// Metadata lists and watches objects' metadata.
	Metadata metadata.Interface
	// FieldManager names the controller in the objects' managedFields:
	// the caches keep the keys it owns.
	FieldManager string
	// Shared holds the values cached objects share.
	Shared *objcache.Interner
	// ResyncPeriod is how often the informers deliver every cached object
	// again; zero is never.
	ResyncPeriod time.Duration
	// Shard limits a sharded informer's list and watch in a namespace
	// ("" for all) to this replica's share of the objects.
	Shard func(gvr schema.GroupVersionResource, namespace string, lw *cache.ListWatch) *cache.ListWatch
}

// Build returns an informer, not yet running, of r in namespace ns (""
// for all), with its cache transform and onError, its watch error handler,
// set: a dynamic informer of whole objects when keep says so, else a
// metadata informer, which lists and watches objects as
// PartialObjectMetadata in protobuf and whose cache keeps what keep names
// of their annotations and labels (all of them when keep is nil). Both are
// built as dynamicinformer and metadatainformer build them, except that
// client-go's log lines about them name the resource (metadatainformer's
// say "*v1.PartialObjectMetadata" for every resource) and that, when
// sharded, their list and watch go through Shard, and that a list or
// watch that gets no answer from the API server is sent again after a
// short pause (retry.UntilAnswered). Both stream their initial list when
// the API server supports it (WatchListClient).
func (b *Builder) Build(r source.Resource, ns string, keep *projection.Projection, indexers cache.Indexers, sharded bool,
	onError func(*Informer) cache.WatchErrorHandlerWithContext) (*Informer, error) {
	return b.build(r, ns, "", keep, indexers, sharded, onError)
}

// build is Build, its list and watch limited by fieldSelector when set.
func (b *Builder) build(r source.Resource, ns, fieldSelector string, keep *projection.Projection, indexers cache.Indexers, sharded bool,
	onError func(*Informer) cache.WatchErrorHandlerWithContext) (*Informer, error) {
	ri := &Informer{GVR: r.GVR}
	if keep != nil {
		ri.Projection = *keep
		keep = &ri.Projection
	}
	var lw *cache.ListWatch
	var client any
	var example runtime.Object
	var transform cache.TransformFunc
	if keep != nil && keep.Whole {
		rc := b.Client.Resource(r.GVR).Namespace(ns)
		lw = &cache.ListWatch{
			ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rc.List(ctx, o) },
			WatchFuncWithContext: rc.Watch,
		}
		client, example, transform = b.Client, &unstructured.Unstructured{}, objcache.ObjectTransform(b.FieldManager, r, keep, b.Shared)
	} else {
		rc := b.Metadata.Resource(r.GVR).Namespace(ns)
		lw = &cache.ListWatch{
			ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rc.List(ctx, o) },
			WatchFuncWithContext: rc.Watch,
		}
		ri.Projecting = objcache.NewProjecting(b.FieldManager, r, keep, b.Shared)
		client, example, transform = b.Metadata, &metav1.PartialObjectMetadata{}, ri.Projecting.Transform
	}
	if fieldSelector != "" {
		lw = selected(lw, fieldSelector)
	}
	lw = retry.UntilAnswered(lw, source.GVRString(r.GVR), retry.InformerBackoff)
	if sharded {
		lw = b.Shard(r.GVR, ns, lw)
	}
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), example,
		cache.SharedIndexInformerOptions{ResyncPeriod: b.ResyncPeriod, Indexers: indexers, ObjectDescription: source.GVRString(r.GVR)})
	ri.Informer = inf
	if err := inf.SetTransform(transform); err != nil {
		return nil, fmt.Errorf("informer of %s: cache transform: %w", source.GVRString(r.GVR), err)
	}
	if err := inf.SetWatchErrorHandlerWithContext(onError(ri)); err != nil {
		return nil, fmt.Errorf("informer of %s: watch error handler: %w", source.GVRString(r.GVR), err)
	}
	return ri, nil
}
