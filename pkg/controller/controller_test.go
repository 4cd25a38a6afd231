package controller

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/expect"
	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

func TestRunPatchesOnlyWhatDiffers(t *testing.T) {
	want := map[string]string{"a": "1", "b": "2"}
	client := newClient(
		fixture.ConfigMap("ns1", "missing", nil),
		fixture.ConfigMap("ns1", "wrong", map[string]string{"a": "0", "b": "2", "user": "keep"}),
		fixture.ConfigMap("ns2", "right", map[string]string{"a": "1", "b": "2"}),
	)
	_, ctx := ktesting.NewTestContext(t)
	recorder, m := events.NewFakeRecorder(10), metrics.New()
	c := newController(client, Options{Workers: 2, Metrics: m, Recorder: recorder})
	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: ab, resources: [configmaps], annotations: {a: '1', b: '2'}}\n"))
	stop := runController(t, ctx, c)

	wantPatches := []patchCall{
		merge("ns1", "missing", `{"metadata":{"annotations":{"a":"1","b":"2"}}}`),
		merge("ns1", "wrong", `{"metadata":{"annotations":{"a":"1"}}}`),
	}
	sorted := func() []patchCall {
		p := patches(client)
		slices.SortFunc(p, func(a, b patchCall) int { return strings.Compare(a.name, b.name) })
		return p
	}
	testutil.WaitFor(t, 10*time.Second, "the cache to converge", func() bool {
		return converged(c, configMaps, 3, want) && len(patches(client)) >= len(wantPatches) &&
			value(t, m.InformersSynced) == 1
	})
	// The echoes of the patches are synced too; they must write nothing.
	testutil.Consistently(t, 200*time.Millisecond, "exactly the expected patches", func() bool {
		return reflect.DeepEqual(sorted(), wantPatches)
	})

	// Someone removes an annotation: it is set again.
	if err := client.Tracker().Update(configMaps, fixture.ConfigMap("ns2", "right", map[string]string{"a": "1"}), "ns2"); err != nil {
		t.Fatal(err)
	}
	wantPatches = slices.Insert(wantPatches, 1, merge("ns2", "right", `{"metadata":{"annotations":{"b":"2"}}}`))
	testutil.WaitFor(t, 10*time.Second, "the removed annotation to be set again", func() bool {
		return converged(c, configMaps, 3, want) && len(patches(client)) >= len(wantPatches)
	})
	if err := stop(); err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}

	if got := sorted(); !reflect.DeepEqual(got, wantPatches) {
		t.Errorf("patches = %v, want %v", got, wantPatches)
	}
	for verb, n := range verbs(client) {
		if verb != "list" && verb != "watch" && verb != "patch" {
			t.Errorf("%d %q requests, want only list, watch and patch", n, verb)
		}
	}
	got, err := client.Tracker().Get(configMaps, "ns1", "wrong")
	if err != nil {
		t.Fatal(err)
	}
	if ann := got.(*unstructured.Unstructured).GetAnnotations(); !maps.Equal(ann, map[string]string{"a": "1", "b": "2", "user": "keep"}) {
		t.Errorf("annotations on the server = %v, want the user's kept", ann)
	}
	if n := c.Informers(); n != 0 {
		t.Errorf("Informers() = %d after Run returned, want 0", n)
	}
	evs := drain(recorder.Events)
	slices.Sort(evs)
	if want := []string{"Normal Annotated Changed annotations a", "Normal Annotated Changed annotations a, b",
		"Normal Annotated Changed annotations b"}; !slices.Equal(evs, want) {
		t.Errorf("events = %q, want %q", evs, want)
	}
	if got := value(t, m.Writes.WithLabelValues("configmaps", metrics.Success)); got != 3 {
		t.Errorf("writes_total{result=success} = %v, want 3", got)
	}
	if got := value(t, m.Syncs.WithLabelValues("configmaps", metrics.Error)); got != 0 {
		t.Errorf("syncs_total{result=error} = %v, want 0", got)
	}
}

func TestSetRulesReenqueuesOnlyOnChange(t *testing.T) {
	const before = "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"
	tests := []struct {
		name       string
		next       string
		wantQueued int
	}{
		{"same rules", before, 0},
		{"same rules, other layout", "rules:\n- name: r\n  annotations: {a: '1'}\n  resources: [configmaps]\n", 0},
		{"value changed", "rules:\n- {name: r, resources: [configmaps], annotations: {a: '2'}}\n", 2},
		{"key removed instead of set", "rules:\n- {name: r, resources: [configmaps], removeAnnotations: [a]}\n", 2},
		{"names selected", "rules:\n- {name: r, resources: [configmaps], names: ['x*'], annotations: {a: '1'}}\n", 2},
		{"rule renamed", "rules:\n- {name: s, resources: [configmaps], annotations: {a: '1'}}\n", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c := withCache(t, newClient(), Options{}, fixture.Compile(t, before), fixture.ConfigMap("ns", "x", nil), fixture.ConfigMap("other", "y", nil))
			next := fixture.Compile(t, tc.next)
			c.SetRules(ctx, next)
			if got := c.queue.Len(); got != tc.wantQueued {
				t.Errorf("queue length = %d, want %d", got, tc.wantQueued)
			}
			if got := resourceOf(c, cmGR).target; got != next.Targets[configMaps] {
				t.Errorf("target in force = %v, want the new one", got)
			}
		})
	}
}

func TestSetRulesStartsAndStopsInformers(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	c := newController(newClient(fixture.ConfigMap("ns", "x", nil), fixture.Object("Namespace", "", "ns", nil)), Options{})
	t.Cleanup(func() { c.SetRules(ctx, &rules.Set{}) })
	cmKey, nsKey := Key{configMaps, "ns", "x"}, Key{namespaces, "", "ns"}
	informer := func(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
		if ri := informerOf(c, gvr); ri != nil {
			return ri.Informer
		}
		return nil
	}

	c.SetRules(ctx, fixture.Compile(t, setAB))
	if n := c.Informers(); n != 2 {
		t.Fatalf("Informers() = %d, want 2", n)
	}
	testutil.WaitFor(t, 10*time.Second, "caches to sync", c.HasSynced)
	c.expect.Record(expect.Key(cmKey), "1", "2", patch.Change{}, false)
	c.expect.Record(expect.Key(nsKey), "1", "2", patch.Change{}, false)
	first := informer(configMaps)

	// A rule that reads objects needs whole objects cached: a new informer.
	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps, namespaces], annotations: {o: {jsonPath: '{.data.o}'}}}\n"))
	if second := informer(configMaps); second == nil || second == first {
		t.Errorf("configmaps informer kept when rules started reading objects, want a new one")
	}
	// Objects of a namespaced resource need to know whether their
	// namespace opts out.
	if c.Informers() != 2 || !namespaceInformer(c) {
		t.Errorf("Informers() = %d, namespace informer %v; want 2 and one", c.Informers(), namespaceInformer(c))
	}

	// Only cluster-scoped resources: no namespace informer.
	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [namespaces], annotations: {a: '1'}}\n"))
	if c.Informers() != 1 || namespaceInformer(c) {
		t.Errorf("Informers() = %d, namespace informer %v; want 1 and none", c.Informers(), namespaceInformer(c))
	}

	// A namespaceSelector needs namespace labels.
	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [namespaces], namespaceSelector: team=a, annotations: {a: '1'}}\n"))
	if n := c.Informers(); n != 1 || informer(namespaces) == nil {
		t.Errorf("Informers() = %d after dropping configmaps, want 1: namespaces", n)
	}
	if !namespaceInformer(c) {
		t.Errorf("no namespace informer for a namespaceSelector")
	}
	if c.expect.Pending(expect.Key(cmKey), "1") || !c.expect.Pending(expect.Key(nsKey), "1") {
		t.Errorf("expectations: want those of configmaps forgotten and those of namespaces kept")
	}
	testutil.WaitFor(t, 10*time.Second, "caches to sync", c.HasSynced)

	c.SetRules(ctx, &rules.Set{})
	if n := c.Informers(); n != 0 || namespaceInformer(c) {
		t.Errorf("Informers() = %d, namespace informer %v after dropping every rule; want 0 and none", n, namespaceInformer(c))
	}
}

// TestRunNamespaceSelector checks that objects are selected by their
// namespace's labels, and synced again when those labels change.
func TestRunNamespaceSelector(t *testing.T) {
	ns := func(name, team string) *unstructured.Unstructured {
		u := fixture.Object("Namespace", "", name, nil)
		u.SetLabels(map[string]string{"team": team})
		return u
	}
	client := newClient(ns("ns1", "a"), ns("ns2", "b"), fixture.ConfigMap("ns1", "x", nil), fixture.ConfigMap("ns2", "x", nil))
	_, ctx := ktesting.NewTestContext(t)
	c := newController(client, Options{})
	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], namespaceSelector: team=a, annotations: {a: '1'}}\n"))
	stop := runController(t, ctx, c)
	patchX := `{"metadata":{"annotations":{"a":"1"}}}`

	one := []patchCall{merge("ns1", "x", patchX)}
	testutil.WaitFor(t, 10*time.Second, "ns1/x to be patched", func() bool { return len(patches(client)) == 1 })
	testutil.Consistently(t, 200*time.Millisecond, "only ns1/x patched", func() bool { return reflect.DeepEqual(patches(client), one) })

	if err := client.Tracker().Update(namespaces, ns("ns2", "a"), ""); err != nil {
		t.Fatal(err)
	}
	two := append(one, merge("ns2", "x", patchX))
	testutil.WaitFor(t, 10*time.Second, "ns2/x to be patched", func() bool { return len(patches(client)) == 2 })
	if err := stop(); err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	if got := patches(client); !reflect.DeepEqual(got, two) {
		t.Errorf("patches = %v, want %v", got, two)
	}
}

func TestResourceGone(t *testing.T) {
	client := newClient()
	client.PrependReactor("list", "configmaps", react(apierrors.NewNotFound(configMaps.GroupResource(), "")))
	gone := make(chan schema.GroupVersionResource, 10)
	_, ctx := ktesting.NewTestContext(t)
	m := metrics.New()
	c := newController(client, Options{Metrics: m, ResourceGone: func(gvr schema.GroupVersionResource) {
		select {
		case gone <- gvr:
		default: // reported already; the informer retries with backoff
		}
	}})
	c.SetRules(ctx, fixture.Compile(t, setAB))
	t.Cleanup(func() { c.SetRules(ctx, &rules.Set{}) })
	select {
	case gvr := <-gone:
		if gvr != configMaps {
			t.Errorf("ResourceGone(%v), want %v", gvr, configMaps)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ResourceGone not called within 10s of a NotFound list")
	}
	if got := value(t, m.ListWatchErrors.WithLabelValues("configmaps", "NotFound")); got < 1 {
		t.Errorf("list_watch_errors_total{configmaps,NotFound} = %v, want at least 1", got)
	}
}

// TestProcessNextWorkItemRecoversPanic makes the first patch of one object
// panic: the worker turns it into an error, retries the object with backoff
// and goes on with the others.
func TestProcessNextWorkItemRecoversPanic(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	a, b := fixture.ConfigMap("ns", "a", nil), fixture.ConfigMap("ns", "b", nil)
	client := newClient(a, b)
	var panicked atomic.Bool
	client.PrependReactor("patch", "configmaps", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.(k8stesting.PatchAction).GetName() == "a" && panicked.CompareAndSwap(false, true) {
			panic("boom")
		}
		return false, nil, nil
	})
	m := metrics.New()
	c := withCache(t, client, Options{Metrics: m}, fixture.Compile(t, setAB), a, b)
	keyA, keyB := Key{configMaps, "ns", "a"}.queued(), Key{configMaps, "ns", "b"}.queued()
	c.queue.Add(keyA)
	c.queue.Add(keyB)

	process := func() {
		t.Helper()
		done := make(chan bool, 1)
		go func() { done <- c.processNextWorkItem(ctx) }()
		select {
		case more := <-done:
			if !more {
				t.Fatal("processNextWorkItem() = false, want true: the controller is not stopping")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("processNextWorkItem() did not return within 10s")
		}
	}
	process() // a: panics
	if !panicked.Load() {
		t.Fatal("the patch of a did not panic")
	}
	if n := c.queue.NumRequeues(keyA); n != 1 {
		t.Errorf("NumRequeues(a) = %d after the panic, want 1 (retried with backoff)", n)
	}
	process() // b
	process() // a again, once its backoff has passed
	for _, k := range []queued{keyA, keyB} {
		if n := c.queue.NumRequeues(k); n != 0 {
			t.Errorf("NumRequeues(%s) = %d, want 0 after success", k.name, n)
		}
	}
	var names []string
	for _, p := range patches(client) {
		names = append(names, p.name)
	}
	if want := []string{"a", "b", "a"}; !slices.Equal(names, want) {
		t.Errorf("patched %v, want %v", names, want)
	}
	for result, want := range map[string]float64{metrics.Success: 2, metrics.Error: 1} {
		if got := value(t, m.Syncs.WithLabelValues("configmaps", result)); got != want {
			t.Errorf("syncs_total{result=%q} = %v, want %v", result, got, want)
		}
	}
}

func TestSyncSafelyPanicError(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := newClient()
	client.PrependReactor("patch", "*", func(k8stesting.Action) (bool, runtime.Object, error) { panic("boom") })
	c := withCache(t, client, Options{}, fixture.Compile(t, setAB), fixture.ConfigMap("ns", "a", nil))
	err := c.syncSafely(ctx, Key{configMaps, "ns", "a"})
	if err == nil || err.Error() != "panic syncing configmaps.v1 ns/a: boom" {
		t.Fatalf("syncSafely() = %v, want the panic as an error naming the key", err)
	}
	if retry.Permanent(err) || errors.Unwrap(err) != nil {
		t.Errorf("panic error is permanent or wraps something: %v", err)
	}
}

// A controller built without Metrics or Recorder counts into metrics of
// its own and records no event, on every path of a sync.
func TestNewControllerDefaults(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	x := fixture.ConfigMap("ns", "x", nil)
	x.SetLabels(map[string]string{"app": "web"})
	client := newClient(x)
	client.PrependReactor("patch", "*", react(apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", nil)))
	c := withCache(t, client, Options{}, fixture.Compile(t, twoTeams), x)
	if c.opts.Metrics == nil || c.opts.Recorder == nil || c.opts.FieldManager != reconcile.FieldManager {
		t.Fatalf("NewController(Options{}) left Metrics %v, Recorder %v, FieldManager %q", c.opts.Metrics, c.opts.Recorder, c.opts.FieldManager)
	}
	// A conflict, a write and its rejection: every sink is used.
	if err := c.syncHandler(ctx, Key{configMaps, "ns", "x"}); !retry.Permanent(err) {
		t.Fatalf("syncHandler() = %v, want the rejection", err)
	}
	if got := value(t, c.opts.Metrics.Conflicts.WithLabelValues("configmaps")); got != 1 {
		t.Errorf("conflicts counted %v, want 1", got)
	}
	if got := value(t, c.opts.Metrics.Writes.WithLabelValues("configmaps", metrics.Error)); got != 1 {
		t.Errorf("failed writes counted %v, want 1", got)
	}
}

// A setup error of SetRules stops Run, which returns it once its informers
// are stopped, whether it came before Run started or while it ran.
func TestRunStopsOnSetupError(t *testing.T) {
	setupErr := errors.New("informer of configmaps.v1: cache transform: already started")
	for _, during := range []bool{false, true} {
		t.Run(fmt.Sprintf("while running: %v", during), func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c := newController(newClient(fixture.ConfigMap("ns", "x", nil)), Options{})
			c.SetRules(ctx, fixture.Compile(t, setAB))
			if !during {
				c.fail(setupErr)
			}
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx) }()
			if during {
				testutil.WaitFor(t, 10*time.Second, "caches to sync", c.HasSynced)
				c.fail(setupErr)
			}
			select {
			case err := <-done:
				if !errors.Is(err, setupErr) {
					t.Errorf("Run() = %v, want %v", err, setupErr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return within 10s of a setup error")
			}
			if n := c.Informers(); n != 0 {
				t.Errorf("Informers() = %d after Run returned, want 0", n)
			}
		})
	}
}
