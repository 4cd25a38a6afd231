package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
// resourceVersion "1", with annotations when ann is not nil.
func object(kind, namespace, name string, ann map[string]string) *unstructured.Unstructured {
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
// namespaces and holds objs.
func newClient(objs ...*unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	ros := make([]runtime.Object, len(objs))
	for i, o := range objs {
		ros[i] = o
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMaps: "ConfigMapList", namespaces: "NamespaceList"}, ros...)
}

// resolve resolves resource names as a cluster serving configmaps and
// namespaces would.
func resolve(name string) (rules.Resource, error) {
	switch name {
	case "configmaps":
		return rules.Resource{GVR: configMaps, Namespaced: true}, nil
	case "namespaces":
		return rules.Resource{GVR: namespaces}, nil
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
// started: their stores hold cached, as if they had listed them.
func withCache(t *testing.T, client *dynamicfake.FakeDynamicClient, set *rules.Set, cached ...*unstructured.Unstructured) *Controller {
	t.Helper()
	c := NewController(client, Options{})
	t.Cleanup(c.queue.ShutDown)
	for gvr, tg := range set.Targets {
		inf := dynamicinformer.NewFilteredDynamicInformer(client, gvr, "", 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
		for _, o := range cached {
			if o.GetKind() == "ConfigMap" && gvr == configMaps || o.GetKind() == "Namespace" && gvr == namespaces {
				if err := inf.GetStore().Add(o); err != nil {
					t.Fatal(err)
				}
			}
		}
		c.informers[gvr] = &resourceInformer{target: tg, informer: inf}
	}
	return c
}

// patchCall is a recorded patch request.
type patchCall struct {
	namespace, name, body, fieldManager string
}

// patches returns the patch requests client received, in order.
func patches(client *dynamicfake.FakeDynamicClient) []patchCall {
	var out []patchCall
	for _, a := range client.Actions() {
		if pa, ok := a.(k8stesting.PatchActionImpl); ok {
			out = append(out, patchCall{pa.GetNamespace(), pa.GetName(), string(pa.GetPatch()), pa.PatchOptions.FieldManager})
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
