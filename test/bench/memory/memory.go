package memory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
)

// Point is kube-annotator's memory once converged at some number of
// objects.
type Point struct {
	// Objects is how many objects kube-annotator had synced.
	Objects int
	// heapInuse is the lowest go_memstats_heap_inuse_bytes sampled, in
	// bytes; it includes garbage not collected yet.
	heapInuse float64
	// liveHeap is the same with GOGC=rig.LiveGOGC: within about that many
	// percent of the live heap; liveAlloc the objects in it alone, without
	// the free slots of their spans.
	liveHeap, liveAlloc float64
	// peakRSS is the process's peak RSS in KiB, restRSS its RSS at rest
	// once converged, at the end of the heap's sampling.
	peakRSS, restRSS int64
	// synced is the time from the process's start until its informers
	// had synced; startup the requests the API server served until then.
	synced  time.Duration
	startup rig.RequestCounts
	// Latency is the create→annotated latency of the objects created
	// one at a time; rebuild, when measured, a reload that rebuilds every
	// cache.
	Latency []time.Duration
	rebuild *rebuildResult
}

// RestRSS is the process's RSS at rest once converged, in KiB.
func (p Point) RestRSS() int64 { return p.restRSS }

// Options say what Measure measures besides memory.
type Options struct {
	Latency int  // objects whose create→annotated latency to measure
	Rebuild bool // measure a reload that rebuilds every cache
}

// Measure measures kube-annotator converged at the objects seeded so far,
// in two fresh processes: one as deployed, which also measures what opts
// ask for, and one with GOGC=rig.LiveGOGC.
func Measure(ctx context.Context, b *rig.Bench, ka *rig.Runner, opts Options) (Point, error) {
	p := Point{Objects: b.Objects}
	tag := fmt.Sprintf("%s-%d-objects", b.Shape.Name, b.Objects)
	run, err := Idle(ctx, b, ka, tag, IdleOptions{Env: b.MemoryEnv(), Latency: opts.Latency, Rebuild: opts.Rebuild})
	if err != nil {
		return p, err
	}
	live, err := Idle(ctx, b, ka, fmt.Sprintf("%s-gogc%d", tag, rig.LiveGOGC), IdleOptions{Env: append(b.MemoryEnv(), fmt.Sprintf("GOGC=%d", rig.LiveGOGC))})
	if err != nil {
		return p, err
	}
	p.heapInuse, p.liveHeap, p.liveAlloc = run.heap.Inuse, live.heap.Inuse, live.heap.Alloc
	p.peakRSS, p.restRSS = run.PeakRSS, run.restRSS
	p.synced, p.startup = run.synced, run.startup
	p.Latency, p.rebuild = run.latency, run.rebuild
	progress.Logf("kube-annotator converged at %d objects: synced %.1fs after its start (%d LIST), heap in use %.1f MiB (%.1f MiB with GOGC=%d), peak RSS %.1f MiB%s, at rest %.1f MiB",
		p.Objects, p.synced.Seconds(), p.startup.List, p.heapInuse/(1<<20), p.liveHeap/(1<<20), rig.LiveGOGC, float64(p.peakRSS)/1024, b.MemLimitNote(p.peakRSS), float64(p.restRSS)/1024)
	return p, nil
}

// IdleOptions say how Idle runs kube-annotator and what it measures.
type IdleOptions struct {
	Env     []string // added to its environment
	Latency int      // objects whose create→annotated latency to measure
	Rebuild bool     // measure a reload that rebuilds every cache
}

// IdleRun is what one run of Idle measured.
type IdleRun struct {
	heap             child.Heap
	PeakRSS, restRSS int64 // KiB
	synced           time.Duration
	startup          rig.RequestCounts
	latency          []time.Duration
	rebuild          *rebuildResult
}

// Idle starts kube-annotator with its metrics and probes on loopback, and
// waits until its informers have synced and every object is annotated.
// Then it samples the Go heap for --memory-window, reads the RSS at rest,
// measures what opts ask for, and stops the controller.
func Idle(ctx context.Context, b *rig.Bench, ka *rig.Runner, tag string, opts IdleOptions) (IdleRun, error) {
	var res IdleRun
	addrs, err := child.FreeAddrs(2)
	if err != nil {
		return res, err
	}
	metricsAddr, readyz := addrs[0], "http://"+addrs[1]+"/readyz"
	w, err := b.OpenWindow(ctx)
	if err != nil {
		return res, err
	}
	c, err := b.Start(ka, tag, opts.Env, "--metrics-bind-address", metricsAddr, "--health-probe-bind-address", addrs[1])
	if err != nil {
		return res, err
	}
	defer func() { _ = c.Stop() }() // in case of an error; stopping twice is fine
	if err := child.WaitReady(ctx, readyz, b.Opts.Timeout, c.Alive); err != nil {
		return res, err
	}
	res.synced = time.Since(c.Started)
	if res.startup, err = w.Close(ctx); err != nil {
		return res, err
	}
	if err := b.Tracker.WaitFor(ctx, "converging", b.Opts.Timeout, b.Tracker.Is(b.Objects, b.Objects), c.Alive); err != nil {
		return res, err
	}
	if res.heap, err = child.MinHeap(ctx, "http://"+metricsAddr+"/metrics", b.Opts.MemoryWindow); err != nil {
		return res, err
	}
	res.restRSS = c.RSS()
	if opts.Latency > 0 {
		if res.latency, err = latency(ctx, b, opts.Latency); err != nil {
			return res, err
		}
		sorted := slices.Sorted(slices.Values(res.latency))
		progress.Logf("Latency of %d Pods: p50 %v, p99 %v", len(sorted), table.Percentile(sorted, 0.50), table.Percentile(sorted, 0.99))
	}
	if opts.Rebuild {
		if res.rebuild, err = rebuild(ctx, b, readyz, "http://"+metricsAddr+"/metrics", c); err != nil {
			return res, err
		}
	}
	if err := c.Stop(); err != nil {
		return res, err
	}
	res.PeakRSS = c.PeakRSS()
	return res, nil
}
