package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// memoryPoint is kube-annotator's memory once converged at some number of
// objects.
type memoryPoint struct {
	objects int
	// heapInuse is the lowest go_memstats_heap_inuse_bytes sampled, in
	// bytes; it includes garbage not collected yet.
	heapInuse float64
	// liveHeap is the same with GOGC=liveGOGC: within about that many
	// percent of the live heap; liveAlloc the objects in it alone, without
	// the free slots of their spans.
	liveHeap, liveAlloc float64
	// peakRSS is the process's peak RSS in KiB, restRSS its RSS at rest
	// once converged, at the end of the heap's sampling.
	peakRSS, restRSS int64
	// synced is the time from the process's start until its informers
	// had synced; startup the requests the API server served until then.
	synced  time.Duration
	startup requestCounts
	// latency is the create→annotated latency of the objects created
	// one at a time; rebuild, when measured, a reload that rebuilds every
	// cache.
	latency []time.Duration
	rebuild *rebuildResult
}

// liveGOGC is the GOGC of the run that estimates the live heap. A
// controller at rest allocates next to nothing, so with its default GOGC
// (50) no collection runs after it has filled its cache, and heap in use
// keeps up to half as much garbage as live data from the sync; with
// GOGC=10 it keeps at most about a tenth.
const liveGOGC = 10

// memoryOptions say what memory measures besides memory.
type memoryOptions struct {
	latency int  // objects whose create→annotated latency to measure
	rebuild bool // measure a reload that rebuilds every cache
}

// memory measures kube-annotator converged at the objects seeded so far,
// in two fresh processes: one as deployed, which also measures what opts
// ask for, and one with GOGC=liveGOGC.
func (b *bench) memory(ctx context.Context, ka *runner, opts memoryOptions) (memoryPoint, error) {
	p := memoryPoint{objects: b.objects}
	tag := fmt.Sprintf("%s-%d-objects", b.shape.name, b.objects)
	run, err := b.idle(ctx, ka, tag, idleOptions{env: b.memoryEnv(), latency: opts.latency, rebuild: opts.rebuild})
	if err != nil {
		return p, err
	}
	live, err := b.idle(ctx, ka, fmt.Sprintf("%s-gogc%d", tag, liveGOGC), idleOptions{env: append(b.memoryEnv(), fmt.Sprintf("GOGC=%d", liveGOGC))})
	if err != nil {
		return p, err
	}
	p.heapInuse, p.liveHeap, p.liveAlloc = run.heap.inuse, live.heap.inuse, live.heap.alloc
	p.peakRSS, p.restRSS = run.peakRSS, run.restRSS
	p.synced, p.startup = run.synced, run.startup
	p.latency, p.rebuild = run.latency, run.rebuild
	logf("kube-annotator converged at %d objects: synced %.1fs after its start (%d LIST), heap in use %.1f MiB (%.1f MiB with GOGC=%d), peak RSS %.1f MiB%s, at rest %.1f MiB",
		p.objects, p.synced.Seconds(), p.startup.list, p.heapInuse/(1<<20), p.liveHeap/(1<<20), liveGOGC, float64(p.peakRSS)/1024, b.memLimitNote(p.peakRSS), float64(p.restRSS)/1024)
	return p, nil
}

// memoryEnv is the environment added to kube-annotator while its memory
// is measured: GOMEMLIMIT if --gomemlimit is set.
func (b *bench) memoryEnv() []string {
	if b.opts.goMemLimit == 0 {
		return nil
	}
	return []string{fmt.Sprintf("GOMEMLIMIT=%d", b.opts.goMemLimit)}
}

// memLimitNote compares a peak RSS in KiB with --gomemlimit, if set.
func (b *bench) memLimitNote(peakRSS int64) string {
	if b.opts.goMemLimit == 0 {
		return ""
	}
	return fmt.Sprintf(" (GOMEMLIMIT %.0f MiB: %.0f%% of it)", float64(b.opts.goMemLimit)/(1<<20), 100*float64(peakRSS<<10)/float64(b.opts.goMemLimit))
}

// idleOptions say how idle runs kube-annotator and what it measures.
type idleOptions struct {
	env     []string // added to its environment
	latency int      // objects whose create→annotated latency to measure
	rebuild bool     // measure a reload that rebuilds every cache
}

// idleRun is what one run of idle measured.
type idleRun struct {
	heap             heap
	peakRSS, restRSS int64 // KiB
	synced           time.Duration
	startup          requestCounts
	latency          []time.Duration
	rebuild          *rebuildResult
}

// idle starts kube-annotator with its metrics and probes on loopback, and
// waits until its informers have synced and every object is annotated.
// Then it samples the Go heap for --memory-window, reads the RSS at rest,
// measures what opts ask for, and stops the controller.
func (b *bench) idle(ctx context.Context, ka *runner, tag string, opts idleOptions) (idleRun, error) {
	var res idleRun
	addrs, err := freeAddrs(2)
	if err != nil {
		return res, err
	}
	metricsAddr, readyz := addrs[0], "http://"+addrs[1]+"/readyz"
	w, err := b.openWindow(ctx)
	if err != nil {
		return res, err
	}
	c, err := b.start(ka, tag, opts.env, "--metrics-bind-address", metricsAddr, "--health-probe-bind-address", addrs[1])
	if err != nil {
		return res, err
	}
	defer func() { _ = c.stop() }() // in case of an error; stopping twice is fine
	if err := waitReady(ctx, readyz, b.opts.timeout, c.alive); err != nil {
		return res, err
	}
	res.synced = time.Since(c.started)
	if res.startup, err = w.close(ctx); err != nil {
		return res, err
	}
	if err := b.tracker.waitFor(ctx, "converging", b.opts.timeout, b.tracker.is(b.objects, b.objects), c.alive); err != nil {
		return res, err
	}
	if res.heap, err = minHeap(ctx, "http://"+metricsAddr+"/metrics", b.opts.memoryWindow); err != nil {
		return res, err
	}
	res.restRSS = c.rss()
	if opts.latency > 0 {
		if res.latency, err = b.latency(ctx, opts.latency); err != nil {
			return res, err
		}
		sorted := slices.Sorted(slices.Values(res.latency))
		logf("Latency of %d Pods: p50 %v, p99 %v", len(sorted), percentile(sorted, 0.50), percentile(sorted, 0.99))
	}
	if opts.rebuild {
		if res.rebuild, err = b.rebuild(ctx, readyz, "http://"+metricsAddr+"/metrics", c); err != nil {
			return res, err
		}
	}
	if err := c.stop(); err != nil {
		return res, err
	}
	res.peakRSS = c.peakRSS()
	return res, nil
}

// handedOut holds the addresses freeAddrs returned, which it does not
// return again: a port is free again once closed, so children started
// one after the other could otherwise be given the same one.
var handedOut sync.Map

// freeAddrs returns n loopback addresses with distinct ports that were
// free a moment ago, and not returned before, for a child to listen on.
func freeAddrs(n int) ([]string, error) {
	var addrs []string
	for tries := 0; len(addrs) < n; tries++ {
		if tries == 100*n {
			return nil, fmt.Errorf("find %d free ports not handed out before: %d found in %d tries", n, len(addrs), tries)
		}
		// Held open until all are chosen, so that no port is chosen twice.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		if _, taken := handedOut.LoadOrStore(l.Addr().String(), true); !taken {
			addrs = append(addrs, l.Addr().String())
		}
	}
	return addrs, nil
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// get returns the body of url, which must answer 200.
func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, nil
}

// waitReady waits up to timeout until url answers 200.
func waitReady(ctx context.Context, url string, timeout time.Duration, alive func() error) error {
	return waitProbe(ctx, url, true, timeout, 100*time.Millisecond, alive)
}

// waitProbe waits up to timeout, polling every interval, until url
// answers 200 (ready) or anything else (not ready).
func waitProbe(ctx context.Context, url string, ready bool, timeout, interval time.Duration, alive func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := get(ctx, url)
		if (err == nil) == ready {
			return nil
		}
		if aerr := alive(); aerr != nil {
			return aerr
		}
		if time.Now().After(deadline) {
			if ready {
				return fmt.Errorf("not ready after %v: %w", timeout, err)
			}
			return fmt.Errorf("still ready after %v", timeout)
		}
		if err := sleep(ctx, interval); err != nil {
			return err
		}
	}
}

// heap is the Go heap as a process's metrics show it, in bytes.
type heap struct {
	// inuse is go_memstats_heap_inuse_bytes: the spans that hold live
	// objects, including the free slots among them.
	inuse float64
	// alloc is go_memstats_heap_alloc_bytes: the objects themselves,
	// live or not collected yet.
	alloc float64
}

// minHeap samples the heap every second for window and returns the
// lowest of each figure.
func minHeap(ctx context.Context, url string, window time.Duration) (heap, error) {
	var lowest heap
	for deadline := time.Now().Add(window); ; {
		body, err := get(ctx, url)
		if err != nil {
			return heap{}, fmt.Errorf("kube-annotator metrics: %w", err)
		}
		v := heap{inuse: promtext.MetricValue(body, "go_memstats_heap_inuse_bytes", nil), alloc: promtext.MetricValue(body, "go_memstats_heap_alloc_bytes", nil)}
		if v.inuse == 0 || v.alloc == 0 {
			return heap{}, fmt.Errorf("kube-annotator metrics at %s have no go_memstats_heap_inuse_bytes or go_memstats_heap_alloc_bytes", url)
		}
		if lowest.inuse == 0 || v.inuse < lowest.inuse {
			lowest.inuse = v.inuse
		}
		if lowest.alloc == 0 || v.alloc < lowest.alloc {
			lowest.alloc = v.alloc
		}
		if time.Now().After(deadline) {
			return lowest, nil
		}
		if err := sleep(ctx, time.Second); err != nil {
			return heap{}, err
		}
	}
}
