package controller

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/expect"
	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"k8s.io/klog/v2"
)

// An update that brings the same version again is a resync, enqueued only
// when resyncs are on; without them it comes from a relist, and the object
// has not changed.
func TestHandlerSameVersion(t *testing.T) {
	cm := rulestest.ConfigMaps
	obj, _ := objcache.MetadataTransform(reconcile.FieldManager, cm, nil, objcache.NewInterner())(fixture.Partial(fixture.WithOwned(fixture.ConfigMap("ns", "x", map[string]string{"a": "1"}), reconcile.FieldManager, "a")))
	for _, tc := range []struct {
		resync time.Duration
		want   int
	}{{0, 0}, {time.Hour, 1}} {
		c := newController(newClient(), Options{ResyncPeriod: tc.resync})
		t.Cleanup(c.queue.ShutDown)
		c.handlerFor(klog.Background(), configMaps).OnUpdate(obj, obj)
		if got := c.queue.Len(); got != tc.want {
			t.Errorf("--resync-period %v: %d keys queued, want %d", tc.resync, got, tc.want)
		}
	}
}

// The echo of the controller's own write, as it made it, is not synced
// again when the write changed only keys the rules set and none reads; a
// version written after it by someone else is, and so is the echo of a
// write that takes a chain of rules one step, one a sync was asked for
// while the echo was awaited, or one the API server applied to a version
// the cache had not seen: there, an earlier write of the controller whose
// answer was lost had set a key the rules no longer want, which only the
// echo brings to the cache.
func TestHandlerOwnEcho(t *testing.T) {
	chain := "rules:\n- {name: tier, resources: [configmaps], labels: {tier: web}}\n" +
		"- {name: web, resources: [configmaps], selector: tier=web, annotations: {web: 'yes'}}\n"
	x := Key{configMaps, "ns", "x"}
	for _, tc := range []struct {
		name       string
		rules      string
		askedAgain bool // a sync is asked for before the echo comes
		behind     bool // the API server has a version the cache has not seen
		wantEcho   int  // keys queued by the echo
	}{
		{"inert write", setAB, false, false, 0},
		{"a chain's first step", chain, false, false, 1},
		{"a sync asked for meanwhile", setAB, true, false, 1},
		{"applied to a version the cache had not seen", setAB, false, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			set := fixture.Compile(t, tc.rules)
			cm := fixture.ConfigMap("ns", "x", map[string]string{"user": "keep"})
			server := cm
			if tc.behind {
				server = fixture.WithOwned(fixture.ConfigMap("ns", "x", map[string]string{"user": "keep", "c": "3"}), reconcile.FieldManager, "c")
				server.SetResourceVersion("50")
			}
			client := newClient(server)
			c := withCache(t, client, Options{}, set, cm)
			if err := c.syncHandler(ctx, x); err != nil {
				t.Fatal(err)
			}
			if len(patches(client)) != 1 {
				t.Fatalf("patches %v, want one", patches(client))
			}
			if tc.askedAgain && !c.expect.Pending(expect.Key(x), cm.GetResourceVersion()) {
				t.Fatal("no write awaits its echo")
			}
			written, err := client.Tracker().Get(configMaps, "ns", "x")
			if err != nil {
				t.Fatal(err)
			}
			tg := set.Targets[configMaps]
			echo := asCached(t, tg, written.(*unstructured.Unstructured))
			h := c.handlerFor(klog.Background(), configMaps)
			h.OnUpdate(asCached(t, tg, cm), echo)
			if got := c.queue.Len(); got != tc.wantEcho {
				t.Errorf("the echo queued %d keys, want %d", got, tc.wantEcho)
			}
			// Someone else changes a key the rules set: synced.
			other := written.DeepCopyObject().(*unstructured.Unstructured)
			other.SetAnnotations(map[string]string{"a": "changed"})
			other.SetLabels(map[string]string{"tier": "db"})
			other.SetResourceVersion(other.GetResourceVersion() + "0")
			h.OnUpdate(echo, asCached(t, tg, other))
			if got := c.queue.Len(); got != 1 {
				t.Errorf("after another writer's change, %d keys queued, want 1", got)
			}
		})
	}
}

// While a reshard's new informer stands by, the serving one and it see
// the same events. The echo of a write, reaching the standby informer
// first, must not consume what the write awaits: a sync on the serving
// cache, still at the version written from, would write again.
func TestHandlerStandby(t *testing.T) {
	w := writeOnce(t)
	c, client, before, echo := w.c, w.client, w.before, w.echo

	standby := &informer.Informer{GVR: configMaps}
	standby.Standby.Store(true)
	standby.UnlessStandby(c.handlerFor(klog.Background(), configMaps)).OnUpdate(before, echo)
	if got := c.queue.Len(); got != 0 {
		t.Errorf("the standby informer's event queued %d keys, want 0", got)
	}
	if err := c.syncHandler(w.ctx, w.key); err != nil { // the serving cache is still at the version written from
		t.Fatal(err)
	}
	if got := len(patches(client)); got != 1 {
		t.Errorf("%d patches after the standby informer saw the echo, want 1: the write still awaits it", got)
	}
	c.handlerFor(klog.Background(), configMaps).OnUpdate(before, echo)
	if got, pending := c.queue.Len(), c.expect.Len(); got != 1 || pending != 0 {
		t.Errorf("the serving informer's echo: %d keys queued, %d writes awaiting their echo; want 1 (a sync was asked for meanwhile) and 0", got, pending)
	}
}

// After a reshard, the new informer's watch can lag the old one's: an
// object the old cache had, and a write was made from, is missing from
// the new cache, then arrives at the version written from. The write
// still awaits its echo, and is not repeated; once the object's deletion
// is seen, nothing awaits it.
func TestSyncCacheBehind(t *testing.T) {
	w := writeOnce(t)
	c, client, before := w.c, w.client, w.before
	store := informerOf(c, configMaps).Informer.GetStore()
	for _, step := range []struct {
		name   string
		change func() error
	}{
		{"not cached yet", func() error { return store.Delete(before) }},
		{"cached at the version written from", func() error { return store.Add(before) }},
	} {
		if err := step.change(); err != nil {
			t.Fatal(err)
		}
		if err := c.syncHandler(w.ctx, w.key); err != nil {
			t.Fatal(err)
		}
		if got := len(patches(client)); got != 1 {
			t.Errorf("%s: %d patches, want 1: the write awaits its echo", step.name, got)
		}
	}
	c.handlerFor(klog.Background(), configMaps).OnDelete(before)
	if got := c.expect.Len(); got != 0 {
		t.Errorf("after the deletion was seen, %d writes await their echo, want 0", got)
	}
}

// wrote is a controller that has written the ConfigMap ns/x once (rules
// setAB), and awaits the write's echo: the object as cached before the
// write and as its echo brings it.
type wrote struct {
	ctx          context.Context
	c            *Controller
	client       *dynamicfake.FakeDynamicClient
	key          Key
	before, echo any
}

func writeOnce(t *testing.T) wrote {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	set := fixture.Compile(t, setAB)
	cm := fixture.ConfigMap("ns", "x", map[string]string{"user": "keep"})
	w := wrote{ctx: ctx, client: newClient(cm), key: Key{configMaps, "ns", "x"}}
	w.c = withCache(t, w.client, Options{}, set, cm)
	if err := w.c.syncHandler(ctx, w.key); err != nil {
		t.Fatal(err)
	}
	written, err := w.client.Tracker().Get(configMaps, "ns", "x")
	if err != nil {
		t.Fatal(err)
	}
	tg := set.Targets[configMaps]
	w.before, w.echo = asCached(t, tg, cm), asCached(t, tg, written.(*unstructured.Unstructured))
	return w
}
