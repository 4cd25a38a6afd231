package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// memoryPoint is kube-annotator's memory once converged at some number of
// objects.
type memoryPoint struct {
	objects int
	// heapInuse is the lowest go_memstats_heap_inuse_bytes sampled, in
	// bytes; it includes garbage not collected yet.
	heapInuse float64
	// liveHeap is the same with GOGC=liveGOGC: within about that many
	// percent of the live heap.
	liveHeap float64
	// peakRSS is the process's peak RSS in KiB.
	peakRSS int64
}

// liveGOGC is the GOGC of the run that estimates the live heap. A
// controller at rest allocates next to nothing, so with its default GOGC
// (50) no collection runs after it has filled its cache, and heap in use
// keeps up to half as much garbage as live data from the sync; with
// GOGC=10 it keeps at most about a tenth.
const liveGOGC = 10

// memory measures kube-annotator converged at the objects seeded so far,
// in two fresh processes: one as deployed, also measuring the latency of
// latency new objects, and one with GOGC=liveGOGC.
func (b *bench) memory(ctx context.Context, ka *runner, latency int) (memoryPoint, []time.Duration, error) {
	p := memoryPoint{objects: b.objects}
	tag := fmt.Sprintf("%d-objects", b.objects)
	run, err := b.idle(ctx, ka, tag, b.memoryEnv(), latency)
	if err != nil {
		return p, nil, err
	}
	live, err := b.idle(ctx, ka, fmt.Sprintf("%s-gogc%d", tag, liveGOGC), append(b.memoryEnv(), fmt.Sprintf("GOGC=%d", liveGOGC)), 0)
	if err != nil {
		return p, nil, err
	}
	p.heapInuse, p.liveHeap, p.peakRSS = run.heapInuse, live.heapInuse, run.peakRSS
	logf("kube-annotator converged at %d objects: heap in use %.1f MiB (%.1f MiB with GOGC=%d), peak RSS %.1f MiB%s",
		p.objects, p.heapInuse/(1<<20), p.liveHeap/(1<<20), liveGOGC, float64(p.peakRSS)/1024, b.memLimitNote(p.peakRSS))
	return p, run.latency, nil
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

// idleRun is what one run of idle measured.
type idleRun struct {
	heapInuse float64 // bytes
	peakRSS   int64   // KiB
	latency   []time.Duration
}

// idle starts kube-annotator with env added to its environment and its
// metrics and probes on loopback, and waits until its informers have
// synced and every object is annotated. Then it samples the Go heap for
// --memory-window, measures the latency of latency objects created one at
// a time, and stops the controller.
func (b *bench) idle(ctx context.Context, ka *runner, tag string, env []string, latency int) (idleRun, error) {
	var res idleRun
	addrs, err := freeAddrs(2)
	if err != nil {
		return res, err
	}
	metricsAddr, probeAddr := addrs[0], addrs[1]
	c, err := b.start(ka, tag, env, "--metrics-bind-address", metricsAddr, "--health-probe-bind-address", probeAddr)
	if err != nil {
		return res, err
	}
	defer func() { _ = c.stop() }() // in case of an error; stopping twice is fine
	if err := waitReady(ctx, "http://"+probeAddr+"/readyz", b.opts.timeout, c.alive); err != nil {
		return res, err
	}
	if err := b.tracker.waitFor(ctx, "converging", b.opts.timeout, b.tracker.is(b.objects, b.objects), c.alive); err != nil {
		return res, err
	}
	if res.heapInuse, err = minHeapInuse(ctx, "http://"+metricsAddr+"/metrics", b.opts.memoryWindow); err != nil {
		return res, err
	}
	if latency > 0 {
		if res.latency, err = b.latency(ctx, latency); err != nil {
			return res, err
		}
		sorted := slices.Sorted(slices.Values(res.latency))
		logf("Latency of %d Pods: p50 %v, p99 %v", len(sorted), percentile(sorted, 0.50), percentile(sorted, 0.99))
	}
	if err := c.stop(); err != nil {
		return res, err
	}
	res.peakRSS = c.peakRSS()
	return res, nil
}

// freeAddrs returns n loopback addresses with distinct ports that were
// free a moment ago, for a child to listen on.
func freeAddrs(n int) ([]string, error) {
	var addrs []string
	for range n {
		// Held open until all are chosen, so that no port is chosen twice.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
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
	deadline := time.Now().Add(timeout)
	for {
		_, err := get(ctx, url)
		if err == nil {
			return nil
		}
		if aerr := alive(); aerr != nil {
			return aerr
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", timeout, err)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// minHeapInuse samples go_memstats_heap_inuse_bytes every second for
// window and returns the lowest value.
func minHeapInuse(ctx context.Context, url string, window time.Duration) (float64, error) {
	lowest := 0.0
	for deadline := time.Now().Add(window); ; {
		body, err := get(ctx, url)
		if err != nil {
			return 0, fmt.Errorf("kube-annotator metrics: %w", err)
		}
		v := h.MetricValue(body, "go_memstats_heap_inuse_bytes", nil)
		if v == 0 {
			return 0, fmt.Errorf("kube-annotator metrics at %s have no go_memstats_heap_inuse_bytes", url)
		}
		if lowest == 0 || v < lowest {
			lowest = v
		}
		if time.Now().After(deadline) {
			return lowest, nil
		}
		if err := sleep(ctx, time.Second); err != nil {
			return 0, err
		}
	}
}
