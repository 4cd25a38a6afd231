package sharding

import (
	"context"
	"fmt"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
)

// shardMemory is the memory of one setup's replicas, converged.
type shardMemory struct {
	setup    string
	replicas int
	cached   []float64
	// heap is each replica's lowest heap with GOGC=rig.LiveGOGC.
	heap    []child.Heap
	peakRSS []int64 // KiB
	// ready is how long the replicas took from their start until the
	// last was ready; cpu each replica's CPU seconds from its start until
	// every object was annotated and cached once: a restart on a
	// converged cluster, with GOGC=rig.LiveGOGC.
	ready time.Duration
	cpu   []float64
	// base is the mean heap of the same setup's replicas with no objects:
	// what a replica holds besides its cache.
	base child.Heap
}

// cacheHeap is replica i's heap less base: its cache.
func (m shardMemory) cacheHeap(i int) child.Heap {
	return child.Heap{Inuse: m.heap[i].Inuse - m.base.Inuse, Alloc: m.heap[i].Alloc - m.base.Alloc}
}

// meanHeap is the mean of the replicas' heaps.
func (m shardMemory) meanHeap() child.Heap {
	var t child.Heap
	for _, hp := range m.heap {
		t.Inuse += hp.Inuse / float64(len(m.heap))
		t.Alloc += hp.Alloc / float64(len(m.heap))
	}
	return t
}

// measureMemory starts fresh replicas of s with GOGC=rig.LiveGOGC, as
// memory.Measure does, waits until they are ready, every object is
// annotated and each is cached by exactly one replica, then samples their
// heaps for --memory-window.
func measureMemory(ctx context.Context, b *rig.Bench, ka *rig.Runner, s shardSetup) (shardMemory, error) {
	p := shardMemory{setup: s.name, replicas: s.replicas}
	progress.Logf("Measuring the memory of %s with GOGC=%d at %d objects", s.name, rig.LiveGOGC, b.Objects)
	env := append(b.MemoryEnv(), fmt.Sprintf("GOGC=%d", rig.LiveGOGC))
	rs, err := startReplicas(b, ka, s, fmt.Sprintf("%s-memory-%d", s.id, b.Objects), env)
	if err != nil {
		return p, err
	}
	defer func() { _ = rs.stop() }() // in case of an error; stopping twice is fine
	start := time.Now()
	for _, r := range rs {
		if err := child.WaitReady(ctx, r.readyz, b.Opts.Timeout, rs.alive); err != nil {
			return p, err
		}
	}
	p.ready = time.Since(start)
	if err := b.Tracker.WaitFor(ctx, "converging", b.Opts.Timeout, b.Tracker.Is(b.Objects, b.Objects), rs.alive); err != nil {
		return p, err
	}
	if err := waitCachedOnce(ctx, b, rs); err != nil {
		return p, err
	}
	if p.cpu, err = rs.metric(ctx, "process_cpu_seconds_total", nil); err != nil {
		return p, err
	}
	p.heap = make([]child.Heap, len(rs))
	err = workload.ForEach(ctx, len(rs), len(rs), func(ctx context.Context, i int) error {
		var err error
		p.heap[i], err = child.MinHeap(ctx, rs[i].metrics, b.Opts.MemoryWindow)
		return err
	})
	if err != nil {
		return p, err
	}
	if p.cached, err = rs.cached(ctx); err != nil {
		return p, err
	}
	if err := rs.stop(); err != nil {
		return p, err
	}
	p.peakRSS = rs.peakRSS()
	inuse := make([]float64, len(p.heap))
	for i, hp := range p.heap {
		inuse[i] = hp.Inuse
	}
	progress.Logf("%s: ready after %.1fs, cached %v, CPU %v s, heap in use with GOGC=%d %v MiB", s.name, p.ready.Seconds(), p.cached, p.cpu, rig.LiveGOGC, table.MiBs(inuse))
	return p, nil
}

// waitCachedOnce waits until the replicas' caches hold every object
// exactly once between them: no range is still being handed over.
func waitCachedOnce(ctx context.Context, b *rig.Bench, rs replicas) error {
	deadline := time.Now().Add(b.Opts.Timeout)
	for {
		cached, err := rs.cached(ctx)
		if err != nil {
			return err
		}
		if int(table.Sum(cached)) == b.Objects {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replicas cached %v objects, not %d in all, after %v", cached, b.Objects, b.Opts.Timeout)
		}
		if err := progress.Sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}
