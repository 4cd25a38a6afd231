package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// Test helpers shared by this package's tests.

// Fixtures: resources, rules and objects.

var (
	configMaps = rulestest.ConfigMaps.GVR
	namespaces = rulestest.Namespaces.GVR
)

const (
	setAB = "rules:\n- {name: ab, resources: [configmaps, namespaces], annotations: {a: '1', b: '2'}}\n"
	// Two rules that meet on objects labelled app=web and want different
	// values of team there.
	twoTeams = "rules:\n- {name: one, resources: [configmaps], selector: app=web, annotations: {team: a}}\n" +
		"- {name: two, resources: [configmaps], names: ['x*'], annotations: {team: b}}\n"
)

// resolve resolves resource names as a cluster serving configmaps and
// namespaces would.
func resolve(name string) (rules.Resource, error) {
	for _, r := range []rules.Resource{rulestest.ConfigMaps, rulestest.Namespaces} {
		if r.GVR.Resource == name {
			return r, nil
		}
	}
	return rules.Resource{}, fmt.Errorf("the server doesn't have a resource type %q", name)
}

// compile compiles a rules file's content for a cluster serving
// configmaps and namespaces, with the cluster's own namespaces excluded
// as the controller runs by default.
func compile(t *testing.T, content string) *rules.Set {
	t.Helper()
	return rulestest.Compile(t, content, rulestest.ConfigMaps, rulestest.Namespaces)
}

// mustJSON is v in JSON, for messages and fixtures.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

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

// withOwned returns u on which manager also owns the annotations keys.
func withOwned(u *unstructured.Unstructured, manager string, keys ...string) *unstructured.Unstructured {
	md := u.Object["metadata"].(map[string]any)
	mf, _ := md["managedFields"].([]any)
	md["managedFields"] = append(mf, owned(manager, keys...)...)
	return u
}

// entry returns a managedFields entry in which manager owns the
// annotation keys, as the metadata client decodes it.
func entry(manager string, keys ...string) metav1.ManagedFieldsEntry {
	raw := `{"f:metadata":{"f:annotations":{`
	for i, k := range keys {
		if i > 0 {
			raw += ","
		}
		raw += `"f:` + k + `":{}`
	}
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		Time: &metav1.Time{}, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(raw + "}}}")}}
}

// decoded returns a ConfigMap's metadata as a metadata informer decodes
// it: everything the API server sends, and no TypeMeta.
func decoded(managedFields ...metav1.ManagedFieldsEntry) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "x", Namespace: "ns", UID: "u-1", ResourceVersion: "7", Generation: 2,
		CreationTimestamp: metav1.Now(), Finalizers: []string{"f"},
		Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"a": "1"},
		OwnerReferences: []metav1.OwnerReference{{Name: "owner"}},
		ManagedFields:   managedFields,
	}}
}

// Controllers under test.

// newController returns a controller on the fake client, whose metadata
// client serves the same objects.
func newController(client *dynamicfake.FakeDynamicClient, opts Options) *Controller {
	return NewController(client, metadataOf(client), opts)
}

// withCache returns a controller with opts for set whose informers are
// never started: their stores hold objs, as if they had listed them.
func withCache(t *testing.T, client *dynamicfake.FakeDynamicClient, opts Options, set *rules.Set, objs ...*unstructured.Unstructured) *Controller {
	t.Helper()
	c := newController(client, opts)
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
		done := make(chan struct{})
		close(done)
		ri := &resourceInformer{gvr: gvr, projection: tg.Projection(), informer: inf, cancel: func() {}, done: done}
		c.resources[gvr.GroupResource()] = &resource{gr: gvr.GroupResource(), phase: ruled, target: tg, informer: ri}
	}
	c.set = set
	return c
}

// resourceOf returns the state of c's resource gr, or nil.
func resourceOf(c *Controller, gr schema.GroupResource) *resource {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.resources[gr]
}

// informerOf returns c's informer of gvr, or nil.
func informerOf(c *Controller, gvr schema.GroupVersionResource) *resourceInformer {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if r := c.resources[gvr.GroupResource()]; r != nil && r.informer != nil && r.informer.gvr == gvr {
		return r.informer
	}
	return nil
}

// namespaceInformer reports whether c runs the namespace informer.
func namespaceInformer(c *Controller) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.namespaces != nil
}

// asCached returns o as the informer of t would cache it.
func asCached(t *testing.T, tg *rules.Target, o *unstructured.Unstructured) any {
	t.Helper()
	var out any
	var err error
	if tg.ReadsObjects {
		out, err = wholeObjectTransform(reconcile.FieldManager)(o)
	} else {
		p := tg.Projection()
		out, err = metadataTransform(reconcile.FieldManager, tg.Resource, &p, newInterner())(partial(o))
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runController runs c until the test ends, and returns a stop that
// cancels it and returns what Run returned.
func runController(t *testing.T, ctx context.Context, c *Controller) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	stopped := false
	stop = func() error {
		t.Helper()
		cancel()
		if stopped {
			return nil
		}
		stopped = true
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10s of cancellation")
			return nil
		}
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	})
	return stop
}

// What the controller did.

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
	return patchCall{namespace, name, types.MergePatchType, body, reconcile.FieldManager, false}
}

// apply is the server-side apply the controller sends to set keys on an
// object whose managedFields the API server does not track.
func apply(namespace, name, body string) patchCall {
	return patchCall{namespace, name, types.ApplyPatchType, body, reconcile.FieldManager, true}
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

// converged reports whether c's cache holds n objects of gvr, all carrying
// the annotations want, and c has nothing queued.
func converged(c *Controller, gvr schema.GroupVersionResource, n int, want map[string]string) bool {
	ri := informerOf(c, gvr)
	if ri == nil || c.queue.Len() != 0 {
		return false
	}
	objs := ri.informer.GetStore().List()
	if len(objs) != n {
		return false
	}
	for _, o := range objs {
		have := o.(cached).GetAnnotations()
		for k, v := range want {
			if have[k] != v {
				return false
			}
		}
	}
	return true
}

// stays fails the test if cond stops holding within d.
func stays(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if !cond() {
			t.Fatalf("%s stopped holding", what)
		}
	}
}
