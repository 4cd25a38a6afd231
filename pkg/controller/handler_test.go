package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/expect"
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
