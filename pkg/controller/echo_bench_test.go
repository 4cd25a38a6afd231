package controller

import (
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/expect"
	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// BenchmarkEcho measures what the echo of a write costs the controller
// from its update event on: enqueued and synced to find nothing to do (a
// write that is not inert, as every write's echo was before), or dropped
// in the handler (an inert write's), in steady state: the queue empty
// before and after. The object is a ConfigMap as the informer caches it,
// carrying the keys the write set, which the controller owns.
func BenchmarkEcho(b *testing.B) {
	for _, tc := range []struct {
		name  string
		inert bool
	}{{"synced", false}, {"dropped", true}} {
		b.Run(tc.name, func(b *testing.B) {
			_, ctx := ktesting.NewTestContext(b)
			set := fixture.Compile(b, setAB)
			before := fixture.ConfigMap("ns", "x", map[string]string{"user": "keep"})
			before.SetLabels(map[string]string{"app": "web", "tier": "frontend", "team": "blue"})
			before.SetResourceVersion("1")
			echo := before.DeepCopy()
			echo.SetAnnotations(map[string]string{"user": "keep", "a": "1", "b": "2"})
			echo.SetResourceVersion("2")
			fixture.WithOwned(echo, reconcile.FieldManager, "a", "b")
			client := newClient(echo)
			c := withCache(b, client, Options{}, set, echo)
			tg := set.Targets[configMaps]
			oldObj, newObj := asCached(b, tg, before), asCached(b, tg, echo)
			h := c.handlerFor(klog.Background(), configMaps)
			k := expect.Key(Key{configMaps, "ns", "x"})
			one, two := "1", "2"
			change := patch.Change{Annotations: map[string]*string{"a": &one, "b": &two}}
			b.ReportAllocs()
			for b.Loop() {
				c.expect.Record(k, "1", "2", change, tc.inert)
				h.OnUpdate(oldObj, newObj)
				if c.queue.Len() > 0 {
					c.processNextWorkItem(ctx)
				}
			}
			if c.queue.Len() != 0 || len(patches(client)) != 0 {
				b.Fatalf("%d keys queued, %d patches: want none", c.queue.Len(), len(patches(client)))
			}
		})
	}
}
