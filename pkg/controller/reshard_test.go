package controller

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// nameShard is a shard of the objects by name, whose names can change,
// as a shard's ranges do.
type nameShard struct {
	mu    sync.Mutex
	names []string
}

func (s *nameShard) set(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names = names
}

// listWatch limits lw to the names of the shard when it is made.
func (s *nameShard) listWatch(_ schema.GroupVersionResource, _ string, lw *cache.ListWatch) *cache.ListWatch {
	s.mu.Lock()
	names := slices.Clone(s.names)
	s.mu.Unlock()
	mine := func(o runtime.Object) bool {
		m, err := meta.Accessor(o)
		return err == nil && slices.Contains(names, m.GetName())
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l, err := lw.ListWithContextFunc(ctx, o)
			if err != nil {
				return nil, err
			}
			items, err := meta.ExtractList(l)
			if err != nil {
				return nil, err
			}
			return l, meta.SetList(l, slices.DeleteFunc(items, func(o runtime.Object) bool { return !mine(o) }))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := lw.WatchFuncWithContext(ctx, o)
			if err != nil {
				return nil, err
			}
			return watch.Filter(w, func(e watch.Event) (watch.Event, bool) { return e, e.Type == watch.Bookmark || mine(e.Object) }), nil
		},
	}
}

// Reshard rebuilds the informers on the shard's new names: the objects of
// the new names are cached and written, those of the old ones dropped.
func TestReshard(t *testing.T) {
	client := newClient(fixture.ConfigMap("ns", "a", nil), fixture.ConfigMap("ns", "b", nil), fixture.ConfigMap("ns", "c", nil), fixture.ConfigMap("ns", "d", nil))
	_, ctx := ktesting.NewTestContext(t)
	sh := &nameShard{}
	sh.set("a", "b")
	c := newController(client, Options{Workers: 2, Shard: sh.listWatch})
	c.SetRules(ctx, fixture.Compile(t, "rules:\n- {name: x, resources: [configmaps], annotations: {x: '1'}}\n"))
	runController(t, ctx, c)
	patched := func() []string {
		var names []string
		for _, p := range patches(client) {
			names = append(names, p.name)
		}
		slices.Sort(names)
		return names
	}
	testutil.WaitFor(t, 10*time.Second, "a and b to be patched", func() bool { return slices.Equal(patched(), []string{"a", "b"}) })

	sh.set("b", "c", "d")
	reshardCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Reshard(reshardCtx); err != nil {
		t.Fatal(err)
	}
	if got := c.CachedObjects(); got != 3 {
		t.Errorf("%d objects cached after the reshard, want 3 (b, c, d)", got)
	}
	if got := c.Informers(); got != 1 {
		t.Errorf("%d informers after the reshard, want 1", got)
	}
	testutil.WaitFor(t, 10*time.Second, "c and d to be patched", func() bool { return slices.Equal(patched(), []string{"a", "b", "c", "d"}) })
	testutil.Consistently(t, 200*time.Millisecond, "no second patch of b", func() bool { return len(patched()) == 4 })
}
