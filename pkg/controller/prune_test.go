package controller

import (
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/expect"
	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

var (
	cmGR     = configMaps.GroupResource()
	nsGR     = namespaces.GroupResource()
	widgetGR = schema.GroupResource{Group: "example.com", Resource: "widgets"}
	// onlyNamespaces rules namespaces, not configmaps.
	onlyNamespaces = "rules:\n- {name: ns, resources: [namespaces], annotations: {a: '1'}}\n"
)

// ours is a ConfigMap carrying "a", which the controller set, and "user",
// which someone else set.
func ours(name string) *unstructured.Unstructured {
	return fixture.WithOwned(fixture.ConfigMap("ns", name, map[string]string{"a": "1", "user": "keep"}), reconcile.FieldManager, "a")
}

// phaseOf returns the phase and target of c's resource gr.
func phaseOf(c *Controller, gr schema.GroupResource) (phase, *rules.Target) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if r := c.resources[gr]; r != nil {
		return r.phase, r.target
	}
	return -1, nil
}

// inPhase reports whether c's resource gr is in phase p.
func inPhase(c *Controller, gr schema.GroupResource, p phase) bool {
	got, _ := phaseOf(c, gr)
	return got == p
}

// pending is kube_annotator_prune_pending of gr for reason.
func pending(t *testing.T, m *metrics.Metrics, gr schema.GroupResource, reason string) float64 {
	t.Helper()
	return value(t, m.PrunePending.WithLabelValues(gr.String(), reason))
}

// A recorded resource that leaves the rules while the controller runs is
// pruned: only the keys the controller owns are deleted, then its informer
// stops and it leaves the record. Keys the controller owns get their
// resource recorded although nothing is written. Without a record, the
// informer just stops.
func TestPruneLiveRemoval(t *testing.T) {
	prune := []patchCall{merge("ns", "x", `{"metadata":{"annotations":{"a":null}}}`)}
	const (
		metadataOnly = "rules:\n- {name: r, resources: [configmaps, namespaces], annotations: {a: '1'}}\n"
		wholeObjects = "rules:\n- {name: r, resources: [configmaps, namespaces], annotations: {a: '1', o: {jsonPath: '{.data.o}'}}}\n"
	)
	tests := []struct {
		name        string
		rules       string
		record      *fakeRecord
		wantPatches []patchCall
	}{
		{name: "recorded", rules: metadataOnly, record: newRecord(nsGR, cmGR), wantPatches: prune},
		{name: "recorded, whole objects cached", rules: wholeObjects, record: newRecord(nsGR, cmGR), wantPatches: prune},
		{name: "recorded when found owning keys", rules: metadataOnly, record: newRecord(), wantPatches: prune},
		{name: "no record", rules: metadataOnly},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(ours("x"), fixture.WithOwned(fixture.Object("Namespace", "", "ns", map[string]string{"a": "1"}), reconcile.FieldManager, "a"))
			opts := Options{Metrics: metrics.New(), Resolver: &fakeResolver{}}
			rec := tc.record
			if rec != nil {
				opts.Record = rec
			}
			_, ctx := ktesting.NewTestContext(t)
			m := opts.Metrics
			c := newController(client, opts)
			c.SetRules(ctx, fixture.Compile(t, tc.rules))
			runController(t, ctx, c)
			testutil.WaitFor(t, 10*time.Second, "caches to sync", c.HasSynced)
			if rec != nil {
				testutil.WaitFor(t, 10*time.Second, "both resources recorded", func() bool { return rec.has(cmGR) && rec.has(nsGR) })
			}

			c.SetRules(ctx, fixture.Compile(t, onlyNamespaces))
			testutil.WaitFor(t, 10*time.Second, "the configmaps informer to stop", func() bool { return c.Informers() == 1 })
			if got := patches(client); !reflect.DeepEqual(got, tc.wantPatches) {
				t.Errorf("patches = %v, want %v", got, tc.wantPatches)
			}
			if rec != nil && (rec.has(cmGR) || !rec.has(nsGR)) {
				t.Errorf("recorded configmaps %v, namespaces %v; want configmaps pruned, namespaces (ruled, owned) kept", rec.has(cmGR), rec.has(nsGR))
			}
			for _, reason := range metrics.PruneReasons {
				if got := pending(t, m, cmGR, reason); got != 0 {
					t.Errorf("prune_pending{configmaps,%s} = %v, want 0", reason, got)
				}
			}
			obj, err := client.Tracker().Get(configMaps, "ns", "x")
			if err != nil {
				t.Fatal(err)
			}
			if got := obj.(*unstructured.Unstructured).GetAnnotations()["user"]; got != "keep" {
				t.Errorf("the user's annotation is %q, want it kept", got)
			}
		})
	}
}

// Recorded resources that no rule names at start are pruned; one that is
// not served waits, reported, until it is served again or leaves the
// record.
func TestPruneRecordedAtStart(t *testing.T) {
	client := newClient(ours("x"), ours("y"))
	rec := newRecord(cmGR, widgetGR)
	resolver := &fakeResolver{}
	_, ctx := ktesting.NewTestContext(t)
	m := metrics.New()
	c := newController(client, Options{Metrics: m, Record: rec, Resolver: resolver})
	c.SetRules(ctx, fixture.Compile(t, onlyNamespaces))
	runController(t, ctx, c)

	if got := pending(t, m, widgetGR, metrics.PruneNotServed); got != 1 {
		t.Errorf("prune_pending{widgets,NotServed} = %v, want 1", got)
	}
	testutil.WaitFor(t, 10*time.Second, "configmaps to be pruned", func() bool { return !rec.has(cmGR) && c.Informers() == 1 })
	if got := len(patches(client)); got != 2 {
		t.Errorf("%d patches, want 2: one per ConfigMap", got)
	}
	if !rec.has(widgetGR) {
		t.Fatalf("widgets, not served, left the record")
	}
	if !c.HasSynced() {
		t.Errorf("HasSynced() = false: a waiting prune must not hold up readiness")
	}
}

// A prune that waits for its resource to be served is retried, with fresh
// discovery, and done once it is.
func TestPruneWaitsUntilServed(t *testing.T) {
	client := newClient(ours("x"))
	rec := newRecord(cmGR)
	resolver := &fakeResolver{hidden: cmGR}
	_, ctx := ktesting.NewTestContext(t)
	m := metrics.New()
	c := newController(client, Options{Metrics: m, Record: rec, Resolver: resolver})
	c.SetRules(ctx, fixture.Compile(t, onlyNamespaces))
	runController(t, ctx, c)
	if got := pending(t, m, cmGR, metrics.PruneNotServed); got != 1 || c.Informers() != 1 {
		t.Fatalf("prune_pending{configmaps,NotServed} = %v, %d informers; want 1 and 1 (namespaces)", got, c.Informers())
	}
	c.retryPending(ctx)
	if !rec.has(cmGR) || len(patches(client)) != 0 {
		t.Fatalf("configmaps, not served, left the record or was patched")
	}

	resolver.serve()
	c.retryPending(ctx)
	testutil.WaitFor(t, 10*time.Second, "configmaps to be pruned", func() bool { return !rec.has(cmGR) && c.Informers() == 1 })
	if resolver.resets == 0 {
		t.Errorf("retried without resetting discovery")
	}
	if got := len(patches(client)); got != 1 {
		t.Errorf("%d patches, want 1", got)
	}
	for _, reason := range metrics.PruneReasons {
		if got := pending(t, m, cmGR, reason); got != 0 {
			t.Errorf("prune_pending{configmaps,%s} = %v after the prune, want 0", reason, got)
		}
	}
}

// A user removing a waiting resource from the record ends its wait.
func TestPruneWaitEndsWhenTheRecordForgets(t *testing.T) {
	rec := newRecord(widgetGR)
	_, ctx := ktesting.NewTestContext(t)
	m := metrics.New()
	c := newController(newClient(), Options{Metrics: m, Record: rec, Resolver: &fakeResolver{}})
	c.SetRules(ctx, fixture.Compile(t, onlyNamespaces))
	t.Cleanup(func() { c.SetRules(ctx, &rules.Set{}) })
	c.retryPending(ctx)
	if got := pending(t, m, widgetGR, metrics.PruneNotServed); got != 1 || !inPhase(c, widgetGR, waiting) {
		t.Fatalf("prune_pending{widgets,NotServed} = %v, want 1 while recorded", got)
	}
	rec.forget(widgetGR)
	c.retryPending(ctx)
	if got := pending(t, m, widgetGR, metrics.PruneNotServed); got != 0 || resourceOf(c, widgetGR) != nil {
		t.Errorf("prune_pending{widgets,NotServed} = %v after it left the record, want 0", got)
	}
}

// A prune that the API server forbids is reported and kept; naming the
// resource in the rules again stops it.
func TestPruneForbiddenThenRuledAgain(t *testing.T) {
	client := newClient(ours("x"))
	client.PrependReactor("patch", "*", react(apierrors.NewForbidden(cmGR, "x", errors.New("RBAC"))))
	rec := newRecord(cmGR)
	_, ctx := ktesting.NewTestContext(t)
	m := metrics.New()
	c := newController(client, Options{Metrics: m, Record: rec, Resolver: &fakeResolver{}})
	c.SetRules(ctx, fixture.Compile(t, onlyNamespaces))
	runController(t, ctx, c)
	testutil.WaitFor(t, 10*time.Second, "the prune to be reported forbidden", func() bool {
		return pending(t, m, cmGR, metrics.PruneForbidden) == 1
	})
	if !rec.has(cmGR) || pending(t, m, cmGR, metrics.PruneRunning) != 0 {
		t.Errorf("forbidden prune: recorded %v, Pruning %v; want kept, and only Forbidden set", rec.has(cmGR), pending(t, m, cmGR, metrics.PruneRunning))
	}

	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"))
	if p, tg := phaseOf(c, cmGR); p != ruled || tg == nil || len(tg.Rules) != 1 || informerOf(c, configMaps) == nil {
		t.Fatalf("configmaps after the rules name it again: %v with target %v, want an informer enforcing the rule", p, tg)
	}
	for _, reason := range metrics.PruneReasons {
		if got := pending(t, m, cmGR, reason); got != 0 {
			t.Errorf("prune_pending{configmaps,%s} = %v, want 0", reason, got)
		}
	}
	if !rec.has(cmGR) {
		t.Errorf("configmaps left the record although its prune never completed")
	}
}

// A pruning informer whose resource stops being served stops, and the
// resource waits; the rules are not resolved again for it.
func TestPruneResourceGone(t *testing.T) {
	client := newClient()
	client.PrependReactor("list", "configmaps", react(apierrors.NewNotFound(cmGR, "")))
	rec := newRecord(cmGR)
	var gone atomic.Int32
	_, ctx := ktesting.NewTestContext(t)
	m := metrics.New()
	c := newController(client, Options{Metrics: m, Record: rec, Resolver: &fakeResolver{},
		ResourceGone: func(schema.GroupVersionResource) { gone.Add(1) }})
	c.SetRules(ctx, &rules.Set{})
	runController(t, ctx, c)
	testutil.WaitFor(t, 10*time.Second, "the prune to wait", func() bool { return pending(t, m, cmGR, metrics.PruneNotServed) == 1 })
	if n := c.Informers(); n != 0 || !rec.has(cmGR) || gone.Load() != 0 {
		t.Errorf("Informers() = %d, recorded %v, ResourceGone called %d times; want 0, true, 0", n, rec.has(cmGR), gone.Load())
	}
}

// A prune is complete only when the cache has synced, no cached object
// carries a key the controller owns, no write awaits its echo and no sync
// is under way.
func TestPruneComplete(t *testing.T) {
	clean := fixture.ConfigMap("ns", "x", map[string]string{"user": "keep"})
	tests := []struct {
		name   string
		cached *unstructured.Unstructured
		setup  func(c *Controller, r *resource) (undo func())
		want   bool
	}{
		{name: "nothing of ours", cached: clean, want: true},
		{name: "a key of ours", cached: ours("x")},
		{name: "a key of ours on an object that opts out", cached: func() *unstructured.Unstructured {
			u := ours("x")
			u.SetAnnotations(map[string]string{"a": "1", rulefile.IgnoreAnnotation: "true"})
			return u
		}()},
		{name: "a sync under way", cached: clean, setup: func(_ *Controller, r *resource) func() {
			r.syncs.Add(1)
			return func() { r.syncs.Add(-1) }
		}},
		{name: "a write awaits its echo", cached: clean, setup: func(c *Controller, _ *resource) func() {
			c.expect.Record(expect.Key(Key{configMaps, "ns", "x"}), "1", "2", patch.Change{}, false)
			return func() {}
		}},
		{name: "a sync of another resource", cached: clean, want: true, setup: func(c *Controller, _ *resource) func() {
			other := &resource{gr: nsGR}
			other.syncs.Add(1)
			c.resources[nsGR] = other
			return func() {}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := &rules.Set{Targets: map[schema.GroupVersionResource]*rules.Target{
				configMaps: reconcile.Prune(rulestest.ConfigMaps),
			}}
			c := withCache(t, newClient(), Options{}, set, tc.cached)
			r := c.resources[cmGR]
			r.phase = pruning
			if tc.setup != nil {
				defer tc.setup(c, r)()
			}
			// The informer never ran: it has not synced.
			if pruneComplete(c) {
				t.Errorf("complete before the cache synced")
			}
			synced(r)
			if got := pruneComplete(c); got != tc.want {
				t.Errorf("complete = %v, want %v", got, tc.want)
			}
		})
	}
}

// pruneComplete reports whether c's prune check finds the one pruning
// resource's prune complete.
func pruneComplete(c *Controller) bool {
	checks, _ := c.prunesToCheck()
	return len(checks) == 1 && c.clean(checks[0])
}

// The writer records a resource before writing to it, and a converged
// object carrying keys the controller owns gets its resource recorded;
// when the record cannot be written, nothing is sent and the sync fails.
func TestSyncRecords(t *testing.T) {
	const ruleA = "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"
	tests := []struct {
		name         string
		cached       *unstructured.Unstructured
		ensureErr    error
		wantRecorded bool
		wantPatches  int
		wantErr      bool
	}{
		{name: "write", cached: fixture.ConfigMap("ns", "x", nil), wantRecorded: true, wantPatches: 1},
		{name: "converged, keys ours", cached: ours("x"), wantRecorded: true},
		{name: "converged, keys theirs", cached: fixture.WithOwned(fixture.ConfigMap("ns", "x", map[string]string{"a": "1"}), "kubectl", "a")},
		{name: "record fails: no write", cached: fixture.ConfigMap("ns", "x", nil), ensureErr: errors.New("forbidden"), wantErr: true},
		{name: "record fails: converged, keys ours", cached: ours("x"), ensureErr: errors.New("forbidden"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			client := newClient(tc.cached)
			rec := newRecord()
			rec.ensureErr = tc.ensureErr
			c := withCache(t, client, Options{Record: rec}, fixture.Compile(t, ruleA), tc.cached)
			err := c.syncHandler(ctx, Key{configMaps, "ns", "x"})
			if (err != nil) != tc.wantErr || rec.has(cmGR) != tc.wantRecorded || len(patches(client)) != tc.wantPatches {
				t.Errorf("syncHandler() = %v, recorded %v, %d patches; want error %v, recorded %v, %d patches",
					err, rec.has(cmGR), len(patches(client)), tc.wantErr, tc.wantRecorded, tc.wantPatches)
			}
			if err != nil && retry.Permanent(err) {
				t.Errorf("syncHandler() = %v, a permanent error: want it retried", err)
			}
		})
	}
}

// A shard prunes its share of the objects, and leaves the resource in the
// record for the other shards.
func TestPrunePartialKeepsTheRecord(t *testing.T) {
	client := newClient(ours("x"))
	rec := newRecord(cmGR)
	_, ctx := ktesting.NewTestContext(t)
	m := metrics.New()
	c := newController(client, Options{Metrics: m, Record: rec, Resolver: &fakeResolver{}, Partial: true})
	c.SetRules(ctx, fixture.Compile(t, onlyNamespaces))
	runController(t, ctx, c)
	testutil.WaitFor(t, 10*time.Second, "the prune informer to stop", func() bool { return len(patches(client)) == 1 && c.Informers() == 1 })
	if !rec.has(cmGR) || rec.removes != 0 {
		t.Errorf("recorded %v after %d removals; want configmaps kept, never removed", rec.has(cmGR), rec.removes)
	}
	if got := pending(t, m, cmGR, metrics.PruneRunning); got != 0 {
		t.Errorf("prune_pending{configmaps,Pruning} = %v once this shard is done, want 0", got)
	}
}
