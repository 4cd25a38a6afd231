package controller

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// A reload whose rules read a key the cache dropped rebuilds the informer,
// which lists again and keeps the key: here, an annotation to remove. One
// that needs less keeps the informer.
func TestSetRulesRebuildsWhenProjectionWidens(t *testing.T) {
	obj := fixture.ConfigMap("ns", "x", map[string]string{"a": "1", "b": "2"})
	client := newClient(obj)
	_, ctx := ktesting.NewTestContext(t)
	c := newController(client, Options{})
	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"))
	runController(t, ctx, c)
	testutil.WaitFor(t, 10*time.Second, "caches to sync", c.HasSynced)
	first := informerOf(c, configMaps).informer
	if cachedB(c) {
		t.Fatalf("the cache keeps annotation b, which no rule names")
	}

	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}, removeAnnotations: [b]}\n"))
	second := informerOf(c, configMaps).informer
	if second == first {
		t.Fatalf("the informer was kept, although the rules now read annotation b")
	}
	want := []patchCall{merge("ns", "x", `{"metadata":{"annotations":{"b":null}}}`)}
	testutil.WaitFor(t, 10*time.Second, "b to be removed", func() bool { return len(patches(client)) == 1 })
	if got := patches(client); !reflect.DeepEqual(got, want) {
		t.Errorf("patches = %+v, want %+v", got, want)
	}

	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"))
	if informerOf(c, configMaps).informer != second {
		t.Errorf("the informer was rebuilt, although the rules need less than it keeps")
	}
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
	obj, ok, _ := informerOf(c, configMaps).informer.GetStore().GetByKey("ns/x")
	_, has := obj.(objcache.Object).GetAnnotations()["b"]
	return ok && has
}
