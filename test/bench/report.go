package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// print writes the results as markdown tables: medians per runner, every
// run, kube-annotator's memory, and its latency.
func (r results) print(w io.Writer, o options) {
	if len(r.runs) > 0 {
		r.printSummary(w, o)
		r.printRuns(w)
	}
	if len(r.memory) > 0 {
		r.printMemory(w, o)
	}
	if len(r.latency) > 0 {
		r.printLatency(w)
	}
}

// column is one column of the summary: how to read it from a run; nil
// values (not applicable to the run) are left out of the median.
type column func(runResult) *float64

func val(v float64) *float64 { return &v }

var (
	colFirst     column = func(r runResult) *float64 { return val(r.first.Seconds()) }
	colConverge  column = func(r runResult) *float64 { return val(r.converge.Seconds()) }
	colRate      column = func(r runResult) *float64 { return val(r.objectsPerSecond()) }
	colPatch     column = func(r runResult) *float64 { return val(float64(r.run.patch)) }
	colGet       column = func(r runResult) *float64 { return val(float64(r.run.get)) }
	colList      column = func(r runResult) *float64 { return val(float64(r.run.list)) }
	colRSS       column = func(r runResult) *float64 { return val(float64(r.peakRSS) / 1024) }
	colSteady    column = func(r runResult) *float64 { return writes(r.steady) }
	colRestarted column = func(r runResult) *float64 { return writes(r.restart) }
)

func writes(c *requestCounts) *float64 {
	if c == nil {
		return nil
	}
	return val(float64(c.writes))
}

// median returns the median of col over the runs of runner, or nil.
func (r results) median(runner string, col column) *float64 {
	var vs []float64
	for _, run := range r.runs {
		if v := col(run); run.runner == runner && v != nil {
			vs = append(vs, *v)
		}
	}
	if len(vs) == 0 {
		return nil
	}
	slices.Sort(vs)
	m := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		m = (vs[len(vs)/2-1] + m) / 2
	}
	return &m
}

func (r results) printSummary(w io.Writer, o options) {
	rounds := 0
	for _, run := range r.runs {
		rounds = max(rounds, run.round)
	}
	reads := "a GET to the API server per Reconcile (controller-runtime's default for unstructured objects)"
	if o.crCacheReads {
		reads = "reads from its cache (--cr-cache-reads)"
	}
	fmt.Fprintf(w, "\n## %d objects, %d workers: medians of %d round(s)\n\n", r.runs[0].objects, o.workers, rounds)
	fmt.Fprintln(w, "| runner | first (s) | converge (s) | objects/s | objects/s ÷ raw | PATCH | GET | LIST | writes in steady state | writes after restart | peak RSS (MiB) | peak RSS ÷ controller-runtime |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	rawRate, crRSS := r.median(rawRunner, colRate), r.median(crRunner, colRSS)
	for _, name := range []string{rawRunner, crRunner, kaRunner} {
		rate, rss := r.median(name, colRate), r.median(name, colRSS)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
			num(r.median(name, colFirst), 1), num(r.median(name, colConverge), 1), num(rate, 0), ratio(rate, rawRate),
			num(r.median(name, colPatch), 0), num(r.median(name, colGet), 0), num(r.median(name, colList), 0),
			num(r.median(name, colSteady), 0), num(r.median(name, colRestarted), 0),
			num(rss, 1), ratio(rss, crRSS))
	}
	fmt.Fprintf(w, `
first, converge: from the runner's start until the benchmark's watch saw the first object, and every object, annotated.
objects/s: objects ÷ converge.
PATCH, GET, LIST: requests the API server served on the four resources from the start until %v after that.
  The controllers' informers sync with a streaming WATCH (client-go's WatchListClient), which is not a LIST.
Writes: during %v of steady state, and during %v after a restart; both should be 0 (controllers only: raw exits when done).
  kube-annotator runs with --resync-period %v, so each window holds at least one resync of every object.
Peak RSS: of the runner's first process. controller-runtime: %s.
`, settle, o.steady, o.steady, o.steady, reads)
}

func (r results) printRuns(w io.Writer) {
	fmt.Fprint(w, "\n### Every run\n\n")
	fmt.Fprintln(w, "| runner | round | first (s) | converge (s) | objects/s | PATCH | GET | LIST | steady state: writes, GET, LIST | after restart: writes, GET, LIST | peak RSS (MiB) | after restart: peak RSS (MiB) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, run := range r.runs {
		restartRSS := "n/a"
		if run.restart != nil {
			restartRSS = mib(run.restartRSS)
		}
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.0f | %d | %d | %d | %s | %s | %s | %s |\n", run.runner, run.round,
			run.first.Seconds(), run.converge.Seconds(), run.objectsPerSecond(), run.run.patch, run.run.get, run.run.list,
			triple(run.steady), triple(run.restart), mib(run.peakRSS), restartRSS)
	}
}

func (r results) printMemory(w io.Writer, o options) {
	fmt.Fprint(w, "\n## kube-annotator's memory, converged\n\n")
	fmt.Fprintf(w, "| objects | heap in use (MiB) | heap in use, GOGC=%d (MiB) | peak RSS (MiB) | heap per object, GOGC=%d (bytes) | peak RSS per object (bytes) |\n", liveGOGC, liveGOGC)
	fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: | ---: |")
	base := r.memory[0]
	for _, p := range r.memory {
		heapPer, rssPer := "", ""
		if n := p.objects - base.objects; n > 0 {
			heapPer = fmt.Sprintf("%.0f", (p.liveHeap-base.liveHeap)/float64(n))
			rssPer = fmt.Sprintf("%.0f", float64(p.peakRSS-base.peakRSS)*1024/float64(n))
		}
		fmt.Fprintf(w, "| %d | %.1f | %.1f | %s | %s | %s |\n", p.objects, p.heapInuse/(1<<20), p.liveHeap/(1<<20), mib(p.peakRSS), heapPer, rssPer)
	}
	fmt.Fprintf(w, `
Fresh processes started with every object already annotated. Heap in use: the lowest
go_memstats_heap_inuse_bytes sampled over %v once ready. At rest nothing triggers a garbage
collection, so with kube-annotator's default GOGC (50) it holds up to half as much garbage from the sync as live data;
a second process with GOGC=%d holds at most about %d%% more than its live heap.
Per object: the difference to the first row, divided by the difference in objects.
`, o.memoryWindow, liveGOGC, liveGOGC)
}

func (r results) printLatency(w io.Writer) {
	lat := slices.Sorted(slices.Values(r.latency))
	objects := 0
	if len(r.memory) > 1 {
		objects = r.memory[1].objects
	}
	fmt.Fprint(w, "\n## kube-annotator's create→annotated latency at idle\n\n")
	fmt.Fprintln(w, "| Pods created one at a time | other objects cached | p50 (ms) | p99 (ms) | max (ms) |")
	fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: |")
	fmt.Fprintf(w, "| %d | %d | %s | %s | %s |\n", len(lat), objects,
		ms(percentile(lat, 0.50)), ms(percentile(lat, 0.99)), ms(lat[len(lat)-1]))
	fmt.Fprintln(w, "\nFrom the create request's return until the benchmark's watch saw the annotation.")
}

// percentile is the nearest-rank percentile p of sorted values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

func mib(kib int64) string { return fmt.Sprintf("%.1f", float64(kib)/1024) }

func num(v *float64, decimals int) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", decimals, *v)
}

func ratio(v, base *float64) string {
	if v == nil || base == nil || *base == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *v / *base)
}

func triple(c *requestCounts) string {
	if c == nil {
		return "n/a"
	}
	return strings.Join([]string{fmt.Sprint(c.writes), fmt.Sprint(c.get), fmt.Sprint(c.list)}, ", ")
}
