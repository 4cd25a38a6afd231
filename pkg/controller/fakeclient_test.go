package controller

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/metadata"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
)

// The fake API server of this package's tests: a dynamic client whose merge patches move the
// resourceVersion, seen through a metadata client as well.

// newClient returns a fake dynamic client that serves configmaps,
// namespaces, pods and nodes and holds objs. Unlike the fake's own, its merge patches give
// the object a new resourceVersion, as the API server does: the
// controller relies on it to tell its own write's echo from a stale cache.
func newClient(objs ...*unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	ros := make([]runtime.Object, len(objs))
	for i, o := range objs {
		ros[i] = o
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMaps: "ConfigMapList", namespaces: "NamespaceList", pods: "PodList", nodes: "NodeList",
			replicaSets: "ReplicaSetList", deployments: "DeploymentList", persistentVolumes: "PersistentVolumeList", claims: "PersistentVolumeClaimList"}, ros...)
	var rv atomic.Int64
	rv.Store(100)
	client.PrependReactor("patch", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pa := action.(k8stesting.PatchActionImpl)
		if pa.GetPatchType() != types.MergePatchType {
			return false, nil, nil
		}
		obj, err := client.Tracker().Get(pa.GetResource(), pa.GetNamespace(), pa.GetName())
		if err != nil {
			return true, nil, err
		}
		var p map[string]any
		if err := json.Unmarshal(pa.GetPatch(), &p); err != nil {
			return true, nil, apierrors.NewBadRequest(err.Error())
		}
		u := obj.(*unstructured.Unstructured)
		mergePatch(u.Object, p)
		u.SetResourceVersion(strconv.FormatInt(rv.Add(1), 10))
		if err := client.Tracker().Update(pa.GetResource(), u, pa.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, u.DeepCopy(), nil
	})
	return client
}

// mergePatch applies a JSON merge patch (RFC 7386) to dst.
func mergePatch(dst, patch map[string]any) {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(dst, k)
		case map[string]any:
			dv, _ := dst[k].(map[string]any)
			if dv == nil {
				dv = map[string]any{}
			}
			mergePatch(dv, pv)
			dst[k] = dv
		default:
			dst[k] = v
		}
	}
}

// react returns a patch reactor that answers with err.
func react(err error) k8stesting.ReactionFunc {
	return func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err }
}

// answer is a patch reactor that answers with u, as a server that applied
// the patch would.
func answer(u *unstructured.Unstructured) k8stesting.ReactionFunc {
	return func(k8stesting.Action) (bool, runtime.Object, error) { return true, u.DeepCopy(), nil }
}

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
	return fixture.Partial(u), nil
}

func (r resourceView) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	list, err := r.ResourceInterface.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: list.GetResourceVersion()}}
	for i := range list.Items {
		out.Items = append(out.Items, *fixture.Partial(&list.Items[i]))
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
			e.Object = fixture.Partial(u)
		}
		return e, true
	}), nil
}

func (r resourceView) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*metav1.PartialObjectMetadata, error) {
	u, err := r.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
	if err != nil {
		return nil, err
	}
	return fixture.Partial(u), nil
}
