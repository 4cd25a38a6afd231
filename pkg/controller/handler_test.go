package controller

import (
	"testing"
	"time"

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
