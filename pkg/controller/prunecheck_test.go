package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// blockingStore is a store whose List, the prune check's scan of a
// cache, closes listing and then waits until release is closed.
type blockingStore struct {
	cache.Store
	listing, release chan struct{}
}

func (s blockingStore) List() []any {
	close(s.listing)
	<-s.release
	return s.Store.List()
}

// storeInformer is an informer that has synced, over store.
type storeInformer struct {
	cache.SharedIndexInformer
	store cache.Store
}

func (i storeInformer) GetStore() cache.Store { return i.store }
func (storeInformer) HasSynced() bool         { return true }

// The prune check reads whole caches without the lock that SetRules and
// the workers take; what it found does not apply to a resource that
// changed meanwhile: here, the rules name it again during the scan, and
// then leave it again.
func TestPruneCheckScansWithoutTheLock(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pruneSet := &rules.Set{Targets: map[schema.GroupVersionResource]*rules.Target{
		configMaps: reconcile.Prune(rulestest.ConfigMaps),
	}}
	c := withCache(t, newClient(), Options{Record: newRecord(cmGR)}, pruneSet, fixture.ConfigMap("ns", "x", map[string]string{"user": "keep"}))
	t.Cleanup(c.stopAll)
	r := c.resources[cmGR]
	r.phase = pruning
	c.set = &rules.Set{}
	store := blockingStore{Store: r.informer.Informer.GetStore(), listing: make(chan struct{}), release: make(chan struct{})}
	r.informer.Informer = storeInformer{r.informer.Informer, store}
	rec := c.opts.Record.(*fakeRecord)
	ruledAgain := fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n")

	checked := make(chan struct{})
	go func() {
		defer close(checked)
		c.checkPrunes(ctx)
	}()
	<-store.listing
	set := make(chan struct{})
	go func() {
		defer close(set)
		c.SetRules(ctx, ruledAgain)
		c.SetRules(ctx, &rules.Set{})
	}()
	select {
	case <-set:
	case <-time.After(10 * time.Second):
		close(store.release)
		t.Fatal("SetRules waited for the prune check to read the cache")
	}
	close(store.release)
	<-checked

	// The check found the old cache clean, and removed configmaps from
	// the record; but the prune that started again must not end before
	// its own check.
	if p, _ := phaseOf(c, cmGR); p != pruning || informerOf(c, configMaps) == nil {
		t.Errorf("configmaps after the check: %v; want pruning, with an informer", p)
	}
	if rec.has(cmGR) {
		t.Errorf("configmaps still recorded; want it removed by the check, which found its cache clean")
	}
}
