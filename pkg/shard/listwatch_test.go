package shard

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// fakeServer answers lists of objs and hands out one watcher, applying the
// shard selector only when sharded, as the API server with the
// ShardedListAndWatch feature on or off. Like the API server, it says in
// lists of whole objects (probes) that it applied the selector, but not
// in lists of PartialObjectMetadata.
type fakeServer struct {
	sharded bool
	objs    []metav1.PartialObjectMetadata
	watcher *watch.FakeWatcher
	lists   []metav1.ListOptions
	probes  []metav1.ListOptions
	watches []metav1.ListOptions
}

func (f *fakeServer) probe(_ context.Context, _ schema.GroupVersionResource, _ string, o metav1.ListOptions) (runtime.Object, error) {
	f.probes = append(f.probes, o)
	l := &unstructured.UnstructuredList{Object: map[string]any{"metadata": map[string]any{}}}
	if f.sharded && o.ShardSelector != "" {
		l.Object["metadata"] = map[string]any{"shardInfo": map[string]any{"selector": o.ShardSelector}}
	}
	return l, nil
}

func (f *fakeServer) listWatch(sel func(runtime.Object) bool) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			f.lists = append(f.lists, o)
			l := &metav1.PartialObjectMetadataList{}
			for i := range f.objs {
				if !f.sharded || sel(&f.objs[i]) {
					l.Items = append(l.Items, f.objs[i])
				}
			}
			return l, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			f.watches = append(f.watches, o)
			return f.watcher, nil
		},
	}
}

func objects(n int) []metav1.PartialObjectMetadata {
	objs := make([]metav1.PartialObjectMetadata, n)
	for i := range objs {
		objs[i].Name = fmt.Sprintf("o%d", i)
		objs[i].UID = uuid.NewUUID()
	}
	return objs
}

func TestListWatch(t *testing.T) {
	rs := NewRanges(Static(1, 3))
	mine := func(o runtime.Object) bool { ok, _ := rs.Selector().Matches(o); return ok }
	for _, sharded := range []bool{true, false} {
		wantMode := map[bool]Mode{true: Server, false: Client}[sharded]
		t.Run(string(wantMode), func(t *testing.T) {
			m := NewMetrics(prometheus.NewRegistry())
			srv := &fakeServer{sharded: sharded, objs: objects(300), watcher: watch.NewFakeWithChanSize(10, false)}
			sh := New(klog.Background(), nil, rs, 3, m)
			sh.probe = srv.probe
			lw := sh.ListWatch(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "", srv.listWatch(mine))

			obj, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			items := obj.(*metav1.PartialObjectMetadataList).Items
			want := 0
			for i := range srv.objs {
				if mine(&srv.objs[i]) {
					want++
				}
			}
			if len(items) != want || want < 70 || want > 130 {
				t.Errorf("list kept %d objects, want %d (about 100)", len(items), want)
			}
			for i := range items {
				if !mine(&items[i]) {
					t.Errorf("list kept %s of another shard", items[i].Name)
				}
			}
			if got := srv.lists[0].ShardSelector; got != rs.Selector().String() || got == "" {
				t.Errorf("list sent shardSelector %q, want %q", got, rs.Selector().String())
			}
			if got := value(m.Mode.WithLabelValues("configmaps", string(wantMode))); got != 1 {
				t.Errorf("mode %s gauge %v, want 1", wantMode, got)
			}

			// A watch list: the mode is probed by a list of one first.
			streaming := true
			w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{SendInitialEvents: &streaming})
			if err != nil {
				t.Fatal(err)
			}
			if len(srv.probes) != 2 || srv.probes[1].Limit != 1 || srv.probes[1].ShardSelector == "" || srv.watches[0].ShardSelector == "" {
				t.Errorf("watch: probes %+v, watch %+v; want a probe of one object and the selector sent", srv.probes, srv.watches)
			}
			end := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
			var theirs *metav1.PartialObjectMetadata
			for i := range srv.objs {
				if !mine(&srv.objs[i]) {
					theirs = &srv.objs[i]
					break
				}
			}
			var own *metav1.PartialObjectMetadata
			for i := range srv.objs {
				if mine(&srv.objs[i]) {
					own = &srv.objs[i]
					break
				}
			}
			if sharded {
				srv.watcher.Add(own) // the server sends nothing else
			} else {
				srv.watcher.Add(theirs)
				srv.watcher.Add(own)
				srv.watcher.Modify(theirs)
			}
			srv.watcher.Action(watch.Bookmark, end)
			srv.watcher.Delete(own)
			for _, want := range []struct {
				typ  watch.EventType
				name string
			}{{watch.Added, own.Name}, {watch.Bookmark, ""}, {watch.Deleted, own.Name}} {
				e := <-w.ResultChan()
				if got := e.Object.(*metav1.PartialObjectMetadata).Name; e.Type != want.typ || got != want.name {
					t.Errorf("event %s %q, want %s %q", e.Type, got, want.typ, want.name)
				}
			}
			w.Stop()
			dropped := value(m.Dropped.WithLabelValues("configmaps"))
			if wantDropped := map[bool]float64{true: 0, false: float64(300 - want + 2)}[sharded]; dropped != wantDropped {
				t.Errorf("dropped %v, want %v", dropped, wantDropped)
			}
		})
	}
}

// value is the value of a gauge or counter.
func value(c prometheus.Metric) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	if m.Gauge != nil {
		return m.Gauge.GetValue()
	}
	return m.Counter.GetValue()
}
