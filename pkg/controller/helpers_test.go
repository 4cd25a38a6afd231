package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// Test helpers shared by this package's tests.

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// object returns an object of kind (a ConfigMap or a Namespace) at
// resourceVersion "1", with annotations when ann is not nil, as kubectl
// created it: the API server tracks its managedFields.
func object(kind, namespace, name string, ann map[string]string) *unstructured.Unstructured {
	u := untracked(kind, namespace, name, ann)
	u.Object["metadata"].(map[string]any)["managedFields"] = []any{
		map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "v1"},
	}
	return u
}

// untracked is object without managedFields, as the API server leaves an
// object created with no fields worth tracking.
func untracked(kind, namespace, name string, ann map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetResourceVersion("1")
	if ann != nil {
		u.SetAnnotations(ann)
	}
	return u
}

func configMap(namespace, name string, ann map[string]string) *unstructured.Unstructured {
	return object("ConfigMap", namespace, name, ann)
}

// newClient returns a fake dynamic client that serves configmaps and
// namespaces and holds objs. Unlike the fake's own, its merge patches give
// the object a new resourceVersion, as the API server does: the
// controller relies on it to tell its own write's echo from a stale cache.
func newClient(objs ...*unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	ros := make([]runtime.Object, len(objs))
	for i, o := range objs {
		ros[i] = o
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMaps: "ConfigMapList", namespaces: "NamespaceList"}, ros...)
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

// resolve resolves resource names as a cluster serving configmaps and
// namespaces would.
func resolve(name string) (rules.Resource, error) {
	switch name {
	case "configmaps":
		return rules.Resource{GVR: configMaps, Kind: "ConfigMap", Namespaced: true}, nil
	case "namespaces":
		return rules.Resource{GVR: namespaces, Kind: "Namespace"}, nil
	}
	return rules.Resource{}, fmt.Errorf("the server doesn't have a resource type %q", name)
}

// compile compiles a rules file's content, with the cluster's own
// namespaces excluded as the controller runs by default.
func compile(t *testing.T, content string) *rules.Set {
	t.Helper()
	f, err := rules.Parse("rules.yaml", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	set, unresolved, err := rules.Compile("rules.yaml", f, resolve)
	if err != nil || len(unresolved) > 0 {
		t.Fatalf("Compile() = %v, unresolved %v", err, unresolved)
	}
	if err := set.ExcludeNamespaces(rules.DefaultExcludedNamespaces); err != nil {
		t.Fatal(err)
	}
	return set
}

// owned returns managedFields in which manager owns the annotations keys.
func owned(manager string, keys ...string) []any {
	fields := map[string]any{}
	for _, k := range keys {
		fields["f:"+k] = map[string]any{}
	}
	return []any{map[string]any{
		"manager": manager, "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": fields}},
	}}
}

// withCache returns a controller for set whose informers are never
// started: their stores hold objs, as if they had listed them.
func withCache(t *testing.T, client *dynamicfake.FakeDynamicClient, set *rules.Set, objs ...*unstructured.Unstructured) *Controller {
	t.Helper()
	c := newController(client, Options{})
	t.Cleanup(c.queue.ShutDown)
	for gvr, tg := range set.Targets {
		inf := dynamicinformer.NewFilteredDynamicInformer(client, gvr, "", 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
		for _, o := range objs {
			if o.GetKind() == "ConfigMap" && gvr == configMaps || o.GetKind() == "Namespace" && gvr == namespaces {
				if err := inf.GetStore().Add(asCached(t, tg, o.DeepCopy())); err != nil {
					t.Fatal(err)
				}
			}
		}
		c.informers[gvr] = &resourceInformer{target: tg, informer: inf}
	}
	return c
}

// asCached returns o as the informer of t would cache it.
func asCached(t *testing.T, tg *rules.Target, o *unstructured.Unstructured) any {
	t.Helper()
	var out any
	var err error
	if tg.ReadsObjects {
		out, err = wholeObjectTransform(DefaultFieldManager)(o)
	} else {
		out, err = metadataTransform(DefaultFieldManager, tg.Resource)(partial(o))
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newController returns a controller on the fake client, whose metadata
// client serves the same objects.
func newController(client *dynamicfake.FakeDynamicClient, opts Options) *Controller {
	return NewController(client, metadataOf(client), opts)
}

// patchCall is a recorded patch request.
type patchCall struct {
	namespace, name string
	typ             types.PatchType
	body            string
	fieldManager    string
	force           bool
}

// merge is the merge patch the controller sends to set or delete keys.
func merge(namespace, name, body string) patchCall {
	return patchCall{namespace, name, types.MergePatchType, body, DefaultFieldManager, false}
}

// apply is the server-side apply the controller sends to set keys on an
// object whose managedFields the API server does not track.
func apply(namespace, name, body string) patchCall {
	return patchCall{namespace, name, types.ApplyPatchType, body, DefaultFieldManager, true}
}

// patches returns the patch requests client received, in order.
func patches(client *dynamicfake.FakeDynamicClient) []patchCall {
	var out []patchCall
	for _, a := range client.Actions() {
		if pa, ok := a.(k8stesting.PatchActionImpl); ok {
			o := pa.PatchOptions
			out = append(out, patchCall{pa.GetNamespace(), pa.GetName(), pa.GetPatchType(), string(pa.GetPatch()),
				o.FieldManager, o.Force != nil && *o.Force})
		}
	}
	return out
}

// verbs counts client's recorded actions by verb.
func verbs(client *dynamicfake.FakeDynamicClient) map[string]int {
	out := map[string]int{}
	for _, a := range client.Actions() {
		out[a.GetVerb()]++
	}
	return out
}

// drain returns the events recorded so far.
func drain(ch chan string) []string {
	var out []string
	for {
		select {
		case e := <-ch:
			out = append(out, e)
		default:
			return out
		}
	}
}

// value returns the value of a counter or gauge.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	if d.GetCounter() != nil {
		return d.GetCounter().GetValue()
	}
	return d.GetGauge().GetValue()
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, timeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}
