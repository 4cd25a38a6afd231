package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// print writes the results as markdown tables: for each shape of objects,
// medians per runner, every run, kube-annotator's memory and the rebuild
// of its caches; then its latency, and its latency and writes with and
// without its admission policy.
func (r results) print(w io.Writer, o options) {
	for _, s := range r.shapes {
		if len(s.runs) > 0 {
			s.printSummary(w, o)
			s.printRuns(w)
		}
		if len(s.memory) > 0 {
			s.printMemory(w, r.base, o)
		}
		if s.when != nil {
			s.when.print(w, s.shape)
		}
		if s.shards != nil {
			s.shards.print(w, s.shape)
		}
	}
	if len(r.latency) > 0 {
		objects := 0
		if len(r.shapes) > 0 && len(r.shapes[0].memory) > 0 {
			objects = r.shapes[0].memory[0].objects
		}
		printLatency(w, r.latency, objects)
	}
	if len(r.admission) > 0 {
		printAdmission(w, r.admission)
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
	colCPU       column = func(r runResult) *float64 { return val(r.cpu / float64(r.objects) * 10000) }
	colAPICPU    column = func(r runResult) *float64 { return val(r.control.apiServer / float64(r.objects) * 10000) }
	colEtcdCPU   column = func(r runResult) *float64 { return val(r.control.etcd / float64(r.objects) * 10000) }
	colSteady    column = func(r runResult) *float64 { return writes(r.steady) }
	colRestarted column = func(r runResult) *float64 { return writes(r.restart) }
	colRestRSS   column = func(r runResult) *float64 {
		if r.steady == nil {
			return nil
		}
		return val(float64(r.restRSS) / 1024)
	}
)

func writes(c *requestCounts) *float64 {
	if c == nil {
		return nil
	}
	return val(float64(c.writes))
}

// median returns the median of col over the runs of runner, or nil.
func (s *shapeResults) median(runner string, col column) *float64 {
	var vs []float64
	for _, run := range s.runs {
		if v := col(run); run.runner == runner && v != nil {
			vs = append(vs, *v)
		}
	}
	return medianOf(vs)
}

func (s *shapeResults) printSummary(w io.Writer, o options) {
	rounds := 0
	for _, run := range s.runs {
		rounds = max(rounds, run.round)
	}
	reads := "a GET to the API server per Reconcile (controller-runtime's default for unstructured objects)"
	if o.crCacheReads {
		reads = "reads from its cache (--cr-cache-reads)"
	}
	fmt.Fprintf(w, "\n## %d %s objects, %d workers: medians of %d round(s)\n\n", s.runs[0].objects, s.shape, o.workers, rounds)
	fmt.Fprintln(w, "| runner | first (s) | converge (s) | objects/s | ÷ raw | ÷ raw-metadata | ÷ controller-runtime | PATCH | GET | LIST | writes in steady state | writes after restart |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	rawRate, rawMetaRate, crRate := s.median(rawRunner, colRate), s.median(rawMetadataRunner, colRate), s.median(crRunner, colRate)
	for _, name := range s.runnerNames() {
		rate := s.median(name, colRate)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
			num(s.median(name, colFirst), 1), num(s.median(name, colConverge), 1), num(rate, 0),
			ratio(rate, rawRate), ratio(rate, rawMetaRate), ratio(rate, crRate),
			num(s.median(name, colPatch), 0), num(s.median(name, colGet), 0), num(s.median(name, colList), 0),
			num(s.median(name, colSteady), 0), num(s.median(name, colRestarted), 0))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| runner | CPU (s) per 10k objects | ÷ raw | ÷ raw-metadata | peak RSS (MiB) | ÷ controller-runtime | RSS at rest (MiB) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	rawCPU, rawMetaCPU, crRSS := s.median(rawRunner, colCPU), s.median(rawMetadataRunner, colCPU), s.median(crRunner, colRSS)
	for _, name := range s.runnerNames() {
		cpu, rss := s.median(name, colCPU), s.median(name, colRSS)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", name,
			num(cpu, 2), ratio(cpu, rawCPU), ratio(cpu, rawMetaCPU), num(rss, 1), ratio(rss, crRSS), num(s.median(name, colRestRSS), 1))
	}
	s.printControlPlane(w)
	fmt.Fprintf(w, `
first, converge: from the runner's start until the benchmark's watch saw the first object, and every object, annotated.
objects/s: objects ÷ converge.
PATCH, GET, LIST: requests the API server served on the four resources from the start until %v after that.
  The controllers' informers sync with a streaming WATCH (client-go's WatchListClient), which is not a LIST.
Writes: during %v of steady state, and during %v after a restart; both should be 0 (controllers only: the raw loops exit when done).
  kube-annotator runs with --resync-period %v, so each window holds at least one resync of every object.
CPU: user and system time of the runner's process from its start until every object was annotated (the raw loops: until they exited).
kube-apiserver, etcd: their process_cpu_seconds_total from just before the runner's start until every object was annotated;
  ratios per run (each run ÷ the raw-metadata run of its round), then their median.
Peak RSS: of the runner's first process; RSS at rest: at the end of steady state. controller-runtime: %s.
`, settle, o.steady, o.steady, o.steady, reads)
}

func (s *shapeResults) printRuns(w io.Writer) {
	fmt.Fprintf(w, "\n### Every run, %s objects\n\n", s.shape)
	fmt.Fprintln(w, "| runner | round | first (s) | converge (s) | objects/s | PATCH | GET | LIST | WATCH | CPU (s) | kube-apiserver CPU (s) | etcd CPU (s) | steady state: writes, GET, LIST | after restart: writes, GET, LIST | peak RSS (MiB) | RSS at rest (MiB) | after restart: peak RSS (MiB) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, run := range s.runs {
		restRSS, restartRSS := "n/a", "n/a"
		if run.steady != nil {
			restRSS = mib(run.restRSS)
		}
		if run.restart != nil {
			restartRSS = mib(run.restartRSS)
		}
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.0f | %d | %d | %d | %d | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s |\n", run.runner, run.round,
			run.first.Seconds(), run.converge.Seconds(), run.objectsPerSecond(), run.run.patch, run.run.get, run.run.list, run.run.watch,
			run.cpu, run.control.apiServer, run.control.etcd, triple(run.steady), triple(run.restart), mib(run.peakRSS), restRSS, restartRSS)
	}
	fmt.Fprintln(w, "\nWATCH: watch requests that ended in the window (the API server counts a watch when it ends).")
}

// projectedObjects is the object count kube-annotator's heap is projected
// to from the largest measured.
const projectedObjects = 1000000

func (s *shapeResults) printMemory(w io.Writer, base memoryPoint, o options) {
	fmt.Fprintf(w, "\n## kube-annotator's memory, converged, %s objects\n\n", s.shape)
	fmt.Fprintf(w, "| objects | synced (s) | LIST | heap in use (MiB) | heap in use, GOGC=%d (MiB) | peak RSS (MiB) | RSS at rest (MiB) | heap per object, GOGC=%d (bytes) | of which objects (bytes) | peak RSS per object (bytes) |\n", liveGOGC, liveGOGC)
	fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var perObject float64
	for _, p := range append([]memoryPoint{base}, s.memory...) {
		heapPer, allocPer, rssPer := "", "", ""
		if n := p.objects - base.objects; n > 0 {
			perObject = (p.liveHeap - base.liveHeap) / float64(n)
			heapPer = fmt.Sprintf("%.0f", perObject)
			allocPer = fmt.Sprintf("%.0f", (p.liveAlloc-base.liveAlloc)/float64(n))
			rssPer = fmt.Sprintf("%.0f", float64(p.peakRSS-base.peakRSS)*1024/float64(n))
		}
		fmt.Fprintf(w, "| %d | %.1f | %d | %.1f | %.1f | %s | %s | %s | %s | %s |\n", p.objects, p.synced.Seconds(), p.startup.list, p.heapInuse/(1<<20), p.liveHeap/(1<<20),
			mib(p.peakRSS), mib(p.restRSS), heapPer, allocPer, rssPer)
	}
	fmt.Fprintf(w, `
Fresh processes started with every object already annotated. synced: from the process's start until its readiness
probe, which waits for every informer to sync, answered; LIST: lists the API server served meanwhile (the informers
stream their initial list with a WATCH unless they fall back to a LIST). Heap in use: the lowest go_memstats_heap_inuse_bytes sampled
over %v once converged; RSS at rest at the end of that. At rest nothing triggers a garbage collection, so with
kube-annotator's default GOGC (50) it holds up to half as much garbage from the sync as live data; a second process
with GOGC=%d holds at most about %d%% more than its live heap.
Per object: the difference to the first row, divided by the difference in objects; of which objects: the same of
go_memstats_heap_alloc_bytes, the objects alone, without the free slots of the spans that hold them.
Projected to %d objects at the last row's heap per object: %.0f MiB of live heap.
`, o.memoryWindow, liveGOGC, liveGOGC, projectedObjects, (base.liveHeap+perObject*projectedObjects)/(1<<20))
	for _, p := range s.memory {
		if rb := p.rebuild; rb != nil {
			fmt.Fprintf(w, "\nA reload whose rules make the caches keep one more label, which no object carries, at %d objects: "+
				"every object was synced again %.1f s after the rules file was written (%d LIST, %d WATCH, %d writes).\n",
				rb.objects, rb.took.Seconds(), rb.requests.list, rb.requests.watch, rb.requests.writes)
		}
	}
}

func printLatency(w io.Writer, latency []time.Duration, objects int) {
	lat := slices.Sorted(slices.Values(latency))
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
