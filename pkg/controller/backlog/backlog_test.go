package backlog

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/util/workqueue"
)

// gauge is a workqueue.GaugeMetric that counts.
type gauge struct{ n atomic.Int64 }

func (g *gauge) Inc() { g.n.Add(1) }
func (g *gauge) Dec() { g.n.Add(-1) }

// provider gives the queue the one depth gauge, and metrics that count
// nothing.
type provider struct{ depth *gauge }

type none struct{}

func (none) Inc()                                                                    {}
func (none) Dec()                                                                    {}
func (none) Set(float64)                                                             {}
func (none) Observe(float64)                                                         {}
func (provider) NewAddsMetric(string) workqueue.CounterMetric                        { return none{} }
func (provider) NewLatencyMetric(string) workqueue.HistogramMetric                   { return none{} }
func (provider) NewWorkDurationMetric(string) workqueue.HistogramMetric              { return none{} }
func (provider) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric { return none{} }
func (provider) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return none{}
}
func (provider) NewRetriesMetric(string) workqueue.CounterMetric { return none{} }
func (p provider) NewDepthMetric(string) workqueue.GaugeMetric   { return p.depth }

// newQueue returns a Queue bounded at bound whose depth, the queue's and
// the backlog's, is counted in the returned gauge.
func newQueue(t *testing.T, bound int) (*Queue[string], *gauge) {
	depth := &gauge{}
	inner := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "test", MetricsProvider: provider{depth}})
	q := New(inner, bound, depth)
	t.Cleanup(q.ShutDown)
	return q, depth
}

func TestBacklog(t *testing.T) {
	keys := func(n int, prefix string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return out
	}
	tests := []struct {
		name        string
		bound       int
		adds        []string
		wantQueued  int  // in the queue after the adds
		wantWaiting int  // in the backlog after the adds
		wantSynced  int  // keys got, each synced once or, added twice meanwhile, twice
		fifo        bool // got in the order added
	}{
		{"fewer than the bound: queued", 10, keys(7, "k"), 7, 0, 7, true},
		{"a burst: the rest waits", 10, keys(25, "k"), 10, 15, 25, true},
		{"a key already queued waits again behind the burst", 10, append(keys(12, "k"), "k0", "k11"), 10, 4, 13, false},
		{"the least bound", 1, keys(5, "k"), 2, 3, 5, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, depth := newQueue(t, tc.bound)
			for _, k := range tc.adds {
				q.Add(k)
			}
			if q.Len() != tc.wantQueued || q.Waiting() != tc.wantWaiting {
				t.Fatalf("after the adds: %d queued and %d waiting, want %d and %d", q.Len(), q.Waiting(), tc.wantQueued, tc.wantWaiting)
			}
			if got := depth.n.Load(); got != int64(tc.wantQueued+tc.wantWaiting) {
				t.Errorf("depth %d, want %d: the backlog counts", got, tc.wantQueued+tc.wantWaiting)
			}
			var order []string
			synced := map[string]int{}
			for q.Len() > 0 || q.Waiting() > 0 {
				k, shutdown := q.Get()
				if shutdown {
					t.Fatal("shut down")
				}
				if q.Len() >= max(tc.bound, 2) {
					t.Errorf("%d keys queued besides the one got, want fewer than the bound %d", q.Len(), tc.bound)
				}
				order = append(order, k)
				synced[k]++
				q.Done(k)
			}
			if len(order) != tc.wantSynced {
				t.Errorf("%d keys got (%v), want %d", len(order), order, tc.wantSynced)
			}
			for _, k := range tc.adds {
				if synced[k] == 0 {
					t.Errorf("%s was never got", k)
				}
			}
			if tc.fifo && !slices.Equal(order, tc.adds) {
				t.Errorf("got %v, want %v: first in, first out", order, tc.adds)
			}
			if q.waiting.chunks != nil || depth.n.Load() != 0 {
				t.Errorf("drained: backlog chunks %v, depth %d; want nil and 0", q.waiting.chunks, depth.n.Load())
			}
		})
	}
}

// A queue shut down drops its backlog and what is added after: Get hands
// out what the queue held, as client-go's does, and then says it is shut
// down.
func TestShutDownDropsBacklog(t *testing.T) {
	q, depth := newQueue(t, 4)
	for i := range 10 {
		q.Add(fmt.Sprint(i))
	}
	q.ShutDown()
	q.Add("after")
	if q.Waiting() != 0 || depth.n.Load() != 4 {
		t.Errorf("after ShutDown: %d waiting, depth %d; want 0 and the queue's 4", q.Waiting(), depth.n.Load())
	}
	got := 0
	for {
		k, shutdown := q.Get()
		if shutdown {
			break
		}
		q.Done(k)
		got++
	}
	if got != 4 {
		t.Errorf("Get handed out %d keys after ShutDown, want the 4 queued", got)
	}
}

// The backlog frees each chunk of keys once drained, not when the whole
// backlog is: a burst's keys take the room of those still waiting.
func TestFIFOFreesDrainedChunks(t *testing.T) {
	var f fifo[int]
	for i := range 3*chunkKeys + 5 {
		f.push(i)
	}
	for _, step := range []struct {
		pops, wantChunks, wantHead int
	}{
		{chunkKeys - 1, 4, chunkKeys - 1},
		{1, 3, 0},
		{chunkKeys + 3, 2, 3},
		{chunkKeys + 2, 0, 0},
	} {
		for range step.pops {
			want := 3*chunkKeys + 5 - f.n
			if got := f.pop(); got != want {
				t.Fatalf("pop() = %d, want %d: first in, first out", got, want)
			}
		}
		if len(f.chunks) != step.wantChunks || f.head != step.wantHead {
			t.Errorf("%d keys left: %d chunks from %d, want %d from %d", f.n, len(f.chunks), f.head, step.wantChunks, step.wantHead)
		}
	}
	f.push(7)
	if f.n != 1 || len(f.chunks) != 1 || f.pop() != 7 || f.chunks != nil {
		t.Errorf("a fifo drained and used again: %+v", f)
	}
}
