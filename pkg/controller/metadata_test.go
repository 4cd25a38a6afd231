package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
)

// metadataOf serves a dynamic client's objects as a metadata client does,
// so that the fake dynamic client's tracker is the one source of truth
// for both kinds of informer in this package's tests.
func metadataOf(client dynamic.Interface) metadata.Interface { return metadataView{client} }

type metadataView struct{ client dynamic.Interface }

// IsWatchListSemanticsUnSupported tells informers to list and watch, as
// the fake dynamic client does not stream lists.
func (metadataView) IsWatchListSemanticsUnSupported() bool { return true }

func (m metadataView) Resource(gvr schema.GroupVersionResource) metadata.Getter {
	return resourceView{m.client.Resource(gvr), m.client.Resource(gvr)}
}

type resourceView struct {
	dynamic.ResourceInterface
	nsable dynamic.NamespaceableResourceInterface
}

func (r resourceView) Namespace(ns string) metadata.ResourceInterface {
	return resourceView{r.nsable.Namespace(ns), r.nsable}
}

func (r resourceView) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*metav1.PartialObjectMetadata, error) {
	u, err := r.ResourceInterface.Get(ctx, name, opts, sub...)
	if err != nil {
		return nil, err
	}
	return partial(u), nil
}

func (r resourceView) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	list, err := r.ResourceInterface.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: list.GetResourceVersion()}}
	for i := range list.Items {
		out.Items = append(out.Items, *partial(&list.Items[i]))
	}
	return out, nil
}

func (r resourceView) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := r.ResourceInterface.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		if u, ok := e.Object.(*unstructured.Unstructured); ok {
			e.Object = partial(u)
		}
		return e, true
	}), nil
}

func (r resourceView) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*metav1.PartialObjectMetadata, error) {
	u, err := r.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
	if err != nil {
		return nil, err
	}
	return partial(u), nil
}

// partial converts u as the API server does for a metadata client: the
// metadata only, and no TypeMeta.
func partial(u *unstructured.Unstructured) *metav1.PartialObjectMetadata {
	p := &metav1.PartialObjectMetadata{}
	md, _ := u.Object["metadata"].(map[string]any)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &p.ObjectMeta); err != nil {
		panic(err) // test objects are well formed
	}
	return p
}
