package main

import (
	"context"
	"fmt"
	"time"
)

// shardMemory is the memory of one setup's replicas, converged.
type shardMemory struct {
	setup    string
	replicas int
	cached   []float64
	// heap is each replica's lowest heap with GOGC=liveGOGC.
	heap    []heap
	peakRSS []int64 // KiB
	// ready is how long the replicas took from their start until the
	// last was ready; cpu each replica's CPU seconds from its start until
	// every object was annotated and cached once: a restart on a
	// converged cluster, with GOGC=liveGOGC.
	ready time.Duration
	cpu   []float64
	// base is the mean heap of the same setup's replicas with no objects:
	// what a replica holds besides its cache.
	base heap
}

// cacheHeap is replica i's heap less base: its cache.
func (m shardMemory) cacheHeap(i int) heap {
	return heap{inuse: m.heap[i].inuse - m.base.inuse, alloc: m.heap[i].alloc - m.base.alloc}
}

// meanHeap is the mean of the replicas' heaps.
func (m shardMemory) meanHeap() heap {
	var t heap
	for _, hp := range m.heap {
		t.inuse += hp.inuse / float64(len(m.heap))
		t.alloc += hp.alloc / float64(len(m.heap))
	}
	return t
}

// shardMemory starts fresh replicas of s with GOGC=liveGOGC, as memory
// does, waits until they are ready, every object is annotated and each is
// cached by exactly one replica, then samples their heaps for
// --memory-window.
func (b *bench) shardMemory(ctx context.Context, ka *runner, s shardSetup) (shardMemory, error) {
	p := shardMemory{setup: s.name, replicas: s.replicas}
	logf("Measuring the memory of %s with GOGC=%d at %d objects", s.name, liveGOGC, b.objects)
	env := append(b.memoryEnv(), fmt.Sprintf("GOGC=%d", liveGOGC))
	rs, err := b.startReplicas(ka, s, fmt.Sprintf("%s-memory-%d", s.id, b.objects), env)
	if err != nil {
		return p, err
	}
	defer func() { _ = rs.stop() }() // in case of an error; stopping twice is fine
	start := time.Now()
	for _, r := range rs {
		if err := waitReady(ctx, r.readyz, b.opts.timeout, rs.alive); err != nil {
			return p, err
		}
	}
	p.ready = time.Since(start)
	if err := b.tracker.waitFor(ctx, "converging", b.opts.timeout, b.tracker.is(b.objects, b.objects), rs.alive); err != nil {
		return p, err
	}
	if err := b.waitCachedOnce(ctx, rs); err != nil {
		return p, err
	}
	if p.cpu, err = rs.metric(ctx, "process_cpu_seconds_total", nil); err != nil {
		return p, err
	}
	p.heap = make([]heap, len(rs))
	err = forEach(ctx, len(rs), len(rs), func(ctx context.Context, i int) error {
		var err error
		p.heap[i], err = minHeap(ctx, rs[i].metrics, b.opts.memoryWindow)
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
		inuse[i] = hp.inuse
	}
	logf("%s: ready after %.1fs, cached %v, CPU %v s, heap in use with GOGC=%d %v MiB", s.name, p.ready.Seconds(), p.cached, p.cpu, liveGOGC, mibs(inuse))
	return p, nil
}

// waitCachedOnce waits until the replicas' caches hold every object
// exactly once between them: no range is still being handed over.
func (b *bench) waitCachedOnce(ctx context.Context, rs replicas) error {
	deadline := time.Now().Add(b.opts.timeout)
	for {
		cached, err := rs.cached(ctx)
		if err != nil {
			return err
		}
		if int(sum(cached)) == b.objects {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replicas cached %v objects, not %d in all, after %v", cached, b.objects, b.opts.timeout)
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// mibs are byte counts in MiB, rounded to a tenth.
func mibs(bytes []float64) []float64 {
	vs := make([]float64, len(bytes))
	for i, v := range bytes {
		vs[i] = float64(int(v/(1<<20)*10+0.5)) / 10
	}
	return vs
}
