package controller

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// A reload whose rules read a key the cache dropped widens the cache; the
// sync of an object that carried the key finds its value unknown, and the
// informer is built again, listing every object, which keep the key: here,
// an annotation to remove. One that needs less keeps the informer.
func TestSetRulesRebuildsWhenADroppedKeyIsNeeded(t *testing.T) {
	obj := fixture.ConfigMap("ns", "x", map[string]string{"a": "1", "b": "2"})
	client := newClient(obj)
	_, ctx := ktesting.NewTestContext(t)
	c := newController(client, Options{})
	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"))
	runController(t, ctx, c)
	testutil.WaitFor(t, 10*time.Second, "caches to sync", c.HasSynced)
	first := informerOf(c, configMaps).Informer
	if cachedB(c) {
		t.Fatalf("the cache keeps annotation b, which no rule names")
	}

	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}, removeAnnotations: [b]}\n"))
	testutil.WaitFor(t, 10*time.Second, "the informer to be built again", func() bool {
		ri := informerOf(c, configMaps)
		return ri != nil && ri.Informer != first
	})
	second := informerOf(c, configMaps).Informer
	want := []patchCall{merge("ns", "x", `{"metadata":{"annotations":{"b":null}}}`)}
	testutil.WaitFor(t, 10*time.Second, "b to be removed", func() bool { return len(patches(client)) == 1 })
	if got := patches(client); !reflect.DeepEqual(got, want) {
		t.Errorf("patches = %+v, want %+v", got, want)
	}

	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"))
	if informerOf(c, configMaps).Informer != second {
		t.Errorf("the informer was rebuilt, although the rules need less than it keeps")
	}
}

// A reload whose rules set or remove keys that no cached object carries
// keeps the informer, which lists nothing again: the cache knows the keys
// are absent. The objects are synced, and the cache keeps the new keys
// from then on.
func TestSetRulesWidensWithoutListing(t *testing.T) {
	x := fixture.ConfigMap("ns", "x", map[string]string{"other": "o"})
	y := fixture.ConfigMap("ns", "y", nil)
	client := newClient(x, y)
	_, ctx := ktesting.NewTestContext(t)
	c := newController(client, Options{})
	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"))
	runController(t, ctx, c)
	testutil.WaitFor(t, 10*time.Second, "caches to sync", c.HasSynced)
	testutil.WaitFor(t, 10*time.Second, "the objects to be annotated", func() bool { return len(patches(client)) == 2 })
	first, lists := informerOf(c, configMaps).Informer, countLists(client)

	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1', k: '2'}, removeAnnotations: [gone]}\n"))
	testutil.WaitFor(t, 10*time.Second, "k to be set", func() bool { return len(patches(client)) == 4 })
	if informerOf(c, configMaps).Informer != first || countLists(client) != lists {
		t.Errorf("the informer was built again (%d more lists), although no object carries k", countLists(client)-lists)
	}
	if got := patches(client)[2:]; !slices.Contains(got, merge("ns", "x", `{"metadata":{"annotations":{"k":"2"}}}`)) {
		t.Errorf("patches after the reload = %+v, want k set on x and y", got)
	}
}

// countLists counts the lists the client served.
func countLists(client *dynamicfake.FakeDynamicClient) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" {
			n++
		}
	}
	return n
}

// A preview of rules that read a key the cache dropped cannot count the
// resource's objects; one of rules that only set such a key counts every
// object they select as changed, as though none carried it.
func TestPreviewOfKeysNotCached(t *testing.T) {
	const inForce = "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"
	x := fixture.ConfigMap("team", "x", map[string]string{"a": "1", "k": "1"})
	c := withCache(t, newClient(), Options{}, fixture.Compile(t, inForce), x)
	for _, tc := range []struct {
		name, rules string
		want        Preview
	}{
		{"sets a key not cached", "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1', k: '1'}}\n",
			Preview{Total: 1, PerRule: map[string]int{"r": 1}}},
		{"removes a key not cached", "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}, removeAnnotations: [k]}\n",
			Preview{PerRule: map[string]int{}, Unknown: []schema.GroupVersionResource{configMaps}}},
		{"selects by a label not cached", "rules:\n- {name: r, resources: [configmaps], selector: app=web, annotations: {a: '2'}}\n",
			Preview{PerRule: map[string]int{}, Unknown: []schema.GroupVersionResource{configMaps}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.Preview(fixture.Compile(t, tc.rules)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Preview() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// cachedB reports whether the cached ns/x carries annotation b.
func cachedB(c *Controller) bool {
	obj, ok, _ := informerOf(c, configMaps).Informer.GetStore().GetByKey("ns/x")
	_, has := obj.(objcache.Object).GetAnnotations()["b"]
	return ok && has
}
