package informer

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// BuildSource returns the informer, not yet running, of the objects of
// src, as Build builds it: of every object of its resource, or, for a
// source of fromRef limited to a name (source.Source.Named), of the
// objects of that name only, through the field selector metadata.name,
// in every namespace. A cluster's other ConfigMaps are never listed.
func (b *Builder) BuildSource(src *source.Source, onError func(*Informer) cache.WatchErrorHandlerWithContext) (*Informer, error) {
	var sel string
	if src.Named != "" {
		sel = fields.OneTermEqualSelector("metadata.name", src.Named).String()
	}
	return b.build(src.Resource, "", sel, SourceKeeps(src), OwnerIndexers(), false, onError)
}

// selected limits lw's lists and watches to the objects fieldSelector
// selects.
func selected(lw *cache.ListWatch, fieldSelector string) *cache.ListWatch {
	list, watchFunc := lw.ListWithContextFunc, lw.WatchFuncWithContext
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = fieldSelector
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = fieldSelector
			return watchFunc(ctx, o)
		},
	}
}

// refIndex is SourceIndex of a source of fromRef: one index per
// resource, field and name.
func refIndex(src *source.Source) string {
	return "source:" + src.Field + ":" + source.GVRString(src.Resource.GVR) + ":" + strings.Join(src.Ref, ".") + ":" + src.Named
}

// indexesRefs reports whether have, the indexers of an informer of t's
// objects, index them by the object each refers to, for each source of
// fromRef t's rules read.
func indexesRefs(t *rules.Target, have cache.Indexers) bool {
	for _, src := range t.Sources() {
		if _, ok := have[SourceIndex(src)]; src.IsRef && !ok {
			return false
		}
	}
	return true
}

// refFields are the fields the cache of the objects of a source of
// fromRef whose data may be read keeps besides their metadata.
var refFields = [][]string{{"apiVersion"}, {"kind"}, {"metadata"}, {"data"}}

// refKeeps is SourceKeeps of a source of fromRef: all of the objects'
// metadata, and, of a ConfigMap, its data, which a rule may read.
func refKeeps(src *source.Source) *projection.Projection {
	if r, ok := source.RefResourceNamed(src.Resource.GVR.Resource); !ok || !r.Data {
		return nil
	}
	return &projection.Projection{Whole: true, Fields: refFields}
}
