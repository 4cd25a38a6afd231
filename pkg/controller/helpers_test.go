package controller

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/testutil"
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
func resolve(name string) (source.Resource, error) {
	for _, r := range []source.Resource{rulestest.ConfigMaps, rulestest.Namespaces} {
		if r.GVR.Resource == name {
			return r, nil
		}
	}
	return source.Resource{}, fmt.Errorf("the server doesn't have a resource type %q", name)
}

// Controllers under test.

// newController returns a controller on the fake client, whose metadata
// client serves the same objects.
func newController(client *dynamicfake.FakeDynamicClient, opts Options) *Controller {
	return NewController(client, metadataOf(client), opts)
}

// withCache returns a controller with opts for set whose informers are
// never started: their stores hold objs, as if they had listed them.
func withCache(t testing.TB, client *dynamicfake.FakeDynamicClient, opts Options, set *rules.Set, objs ...*unstructured.Unstructured) *Controller {
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
		ri := &informer.Informer{GVR: gvr, Projection: tg.Projection(), Informer: inf}
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
func informerOf(c *Controller, gvr schema.GroupVersionResource) *informer.Informer {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if r := c.resources[gvr.GroupResource()]; r != nil && r.informer != nil && r.informer.GVR == gvr {
		return r.informer
	}
	return nil
}

// namespaceInformer reports whether c runs the namespace informer.
func namespaceInformer(c *Controller) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.sources[source.Namespace] != nil
}

// asCached returns o as the informer of t would cache it.
func asCached(t testing.TB, tg *rules.Target, o *unstructured.Unstructured) any {
	t.Helper()
	var out any
	var err error
	if tg.ReadsObjects {
		out, err = objcache.WholeObjectTransform(reconcile.FieldManager)(o)
	} else {
		p := tg.Projection()
		out, err = objcache.MetadataTransform(reconcile.FieldManager, tg.Resource, &p, objcache.NewInterner())(fixture.Partial(o))
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
func value(t testing.TB, m prometheus.Metric) float64 {
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

// converged reports whether c's cache holds n objects of gvr, all carrying
// the annotations want, and c has nothing queued.
func converged(c *Controller, gvr schema.GroupVersionResource, n int, want map[string]string) bool {
	ri := informerOf(c, gvr)
	if ri == nil || c.queue.Len() != 0 {
		return false
	}
	objs := ri.Informer.GetStore().List()
	if len(objs) != n {
		return false
	}
	for _, o := range objs {
		have := o.(objcache.Object).GetAnnotations()
		for k, v := range want {
			if have[k] != v {
				return false
			}
		}
	}
	return true
}

// waitLabel waits until the objects of gvr (of kind) in namespace that
// client's tracker holds carry, by name, the values want of the label
// key ("" for none).
func waitLabel(t *testing.T, client *dynamicfake.FakeDynamicClient, gvr schema.GroupVersionResource, kind, namespace, key, what string, want map[string]string) {
	t.Helper()
	labels := func() map[string]string {
		l, err := client.Tracker().List(gvr, gvr.GroupVersion().WithKind(kind), namespace)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, o := range l.(*unstructured.UnstructuredList).Items {
			out[o.GetName()] = o.GetLabels()[key]
		}
		return out
	}
	testutil.WaitFor(t, 10*time.Second, what, func() bool { return maps.Equal(labels(), want) })
}
