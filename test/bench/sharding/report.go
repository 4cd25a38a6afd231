package sharding

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
)

// Results is what --shards measured.
type Results struct {
	shards, objects int
	memoryWindow    time.Duration
	runs            []shardRun
	reshards        []reshardRun
	memory          []shardMemory
}

// The targets for sharding.
const (
	// heapSlack is how much a replica's cache heap may exceed 1/N of one
	// replica's, relative to that.
	heapSlack = 0.10
	// maxPatchesPerObject is the most PATCH requests per object while a
	// group changes.
	maxPatchesPerObject = 1.01
)

// Print writes the sharding tables and the targets.
func (r *Results) Print(w io.Writer, shape string) {
	if len(r.runs) > 0 {
		r.printSummary(w, shape)
		r.printRuns(w, shape)
		r.printScale(w, shape)
	}
	if len(r.reshards) > 0 {
		r.printReshards(w)
	}
	if len(r.memory) > 0 {
		r.printMemory(w)
	}
	r.printTargets(w)
}

// median is the median of f over the runs of setup.
func (r *Results) median(setup string, f func(shardRun) float64) *float64 {
	var vs []float64
	for _, run := range r.runs {
		if run.setup == setup {
			vs = append(vs, f(run))
		}
	}
	return table.Median(vs)
}

// setups are the setups measured, in the order they ran.
func (r *Results) setups() []string {
	var names []string
	for _, run := range r.runs {
		if !slices.Contains(names, run.setup) {
			names = append(names, run.setup)
		}
	}
	return names
}

func (r *Results) printSummary(w io.Writer, shape string) {
	rounds := 0
	for _, run := range r.runs {
		rounds = max(rounds, run.round)
	}
	fmt.Fprintf(w, "\n## Sharding: %d %s objects, 1 replica vs %d: medians of %d round(s)\n\n", r.objects, shape, r.shards, rounds)
	fmt.Fprintln(w, "| setup | first (s) | converge (s) | objects/s | ÷ 1 replica | PATCH per object | replicas' CPU (s) | replicas' cores | kube-apiserver CPU (s) | kube-apiserver cores | etcd CPU (s) | peak RSS, largest replica (MiB) | peak RSS, all replicas (MiB) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	single := r.median(r.setups()[0], shardRun.objectsPerSecond)
	for _, name := range r.setups() {
		rate := r.median(name, shardRun.objectsPerSecond)
		conv := func(run shardRun) float64 { return run.converge.Seconds() }
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
			table.Num(r.median(name, func(run shardRun) float64 { return run.first.Seconds() }), 1), table.Num(r.median(name, conv), 1), table.Num(rate, 0), table.Ratio(rate, single),
			table.Num(r.median(name, func(run shardRun) float64 { return float64(run.run.Patch) / float64(run.objects) }), 3),
			table.Num(r.median(name, func(run shardRun) float64 { return table.Sum(run.cpu) }), 1),
			table.Num(r.median(name, func(run shardRun) float64 { return table.Sum(run.cpu) / conv(run) }), 2),
			table.Num(r.median(name, func(run shardRun) float64 { return run.control.APIServer }), 1),
			table.Num(r.median(name, func(run shardRun) float64 { return run.control.APIServer / conv(run) }), 2),
			table.Num(r.median(name, func(run shardRun) float64 { return run.control.Etcd }), 1),
			table.Num(r.median(name, func(run shardRun) float64 { return float64(slices.Max(run.peakRSS)) / 1024 }), 1),
			table.Num(r.median(name, func(run shardRun) float64 { return float64(table.SumInts(run.peakRSS)) / 1024 }), 1))
	}
	fmt.Fprintf(w, `
first, converge: from the first replica's start until the benchmark's watch saw the first object, and every object, annotated; objects/s: objects ÷ converge.
PATCH per object: PATCH requests the API server served on the four resources until %v after that, per object.
CPU: user and system time until every object was annotated, of the replicas (from their start) and of kube-apiserver and
etcd (from their metrics' process_cpu_seconds_total, over the same time); cores: CPU ÷ converge. The benchmark's own
watch and everything else on the machine share the same cores.
`, rig.Settle)
}

func (r *Results) printRuns(w io.Writer, shape string) {
	fmt.Fprintf(w, "\n### Every sharding run, %s objects\n\n", shape)
	fmt.Fprintln(w, "| setup | round | converge (s) | objects/s | PATCH | GET | LIST | CPU per replica (s) | kube-apiserver CPU (s) | cached objects per replica | shard selectors applied by the API server | informer rebuilds | peak RSS per replica (MiB) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, run := range r.runs {
		selectors := "n/a"
		if run.informers > 0 {
			selectors = fmt.Sprintf("%.0f of %d", run.serverSelectors, run.informers)
			if len(run.clientSide) > 0 {
				selectors += " (not: " + strings.Join(run.clientSide, ", ") + ")"
			}
		}
		fmt.Fprintf(w, "| %s | %d | %.1f | %.0f | %d | %d | %d | %s | %.1f | %s | %s | %.0f | %s |\n", run.setup, run.round,
			run.converge.Seconds(), run.objectsPerSecond(), run.run.Patch, run.run.Get, run.run.List,
			table.Joined(run.cpu, "%.1f"), run.control.APIServer, table.Joined(run.cached, "%.0f"), selectors, run.reshards, table.JoinedKiB(run.peakRSS))
	}
	fmt.Fprintln(w, "\nShard selectors: the replicas' informers whose shard selector the API server applied (kube_annotator_shard_informer_mode{mode=\"server\"}), so that each received only its share; for the others (not: …), each replica received every object and dropped the others' share itself.\nInformer rebuilds: kube_annotator_shard_reshards_total of the replicas once every object was annotated (a group's handovers).")
}

func (r *Results) printReshards(w io.Writer) {
	from := r.reshards[0].from
	fmt.Fprintf(w, "\n### Sharding: a group of %d grows to %d and shrinks back while it converges\n\n", from, from+1)
	fmt.Fprintln(w, "| round | grown after (s) | annotated then | shrunk after (s) | annotated then | converge (s) | PATCH | PATCH per object | annotated at the end | informer rebuilds | cached objects per replica at the end |")
	fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, rr := range r.reshards {
		fmt.Fprintf(w, "| %d | %.1f | %d | %.1f | %d | %.1f | %d | %.4f | %d of %d | %.0f | %s |\n", rr.round,
			rr.grownAt.Seconds(), rr.grown, rr.shrunkAt.Seconds(), rr.shrunk, rr.converge.Seconds(),
			rr.run.Patch, rr.patchesPerObject(), rr.annotated, rr.objects, rr.reshards, table.Joined(rr.cached, "%.0f"))
	}
	fmt.Fprintf(w, `
From the objects' reset, %d replicas of a --shard-group start together; once a quarter of the objects are annotated one
more starts, and once it is ready (it has synced its ranges) the first one is stopped with SIGTERM.
PATCH: requests the API server served on the four resources until %v after every object was annotated.
Annotated at the end: a fresh list from the API server. Informer rebuilds: kube_annotator_shard_reshards_total of the
replicas left.
`, from, groupSettle)
}

func (r *Results) printMemory(w io.Writer) {
	fmt.Fprintf(w, "\n### Sharding: each replica's memory, converged at %d objects\n\n", r.objects)
	fmt.Fprintf(w, "| setup | replica | cached objects | heap in use, GOGC=%d (MiB) | with no objects (MiB) | cache heap (MiB) | ÷ 1 replica's | cache objects alone (MiB) | ÷ 1 replica's | peak RSS (MiB) | ready (s) | CPU (s) |\n", rig.LiveGOGC)
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	single := r.singleCacheHeap()
	for _, m := range r.memory {
		for i := range m.heap {
			c := m.cacheHeap(i)
			fmt.Fprintf(w, "| %s | %d | %.0f | %.1f | %.1f | %.1f | %s | %.1f | %s | %s | %.1f | %.1f |\n", m.setup, i, m.cached[i],
				m.heap[i].Inuse/(1<<20), m.base.Inuse/(1<<20), c.Inuse/(1<<20), table.Ratio(&c.Inuse, &single.Inuse),
				c.Alloc/(1<<20), table.Ratio(&c.Alloc, &single.Alloc), table.MiB(m.peakRSS[i]), m.ready.Seconds(), m.cpu[i])
		}
	}
	fmt.Fprintf(w, `
Fresh replicas of each setup, with GOGC=%d, first before the objects were seeded, then once every object was annotated
and cached by exactly one replica. Heap in use: the lowest go_memstats_heap_inuse_bytes sampled over %v; with no
objects: the mean of the setup's replicas before seeding. Cache heap: the difference; cache objects alone: the same of
go_memstats_heap_alloc_bytes, without the free slots of the spans that hold them. Ready: from the replicas' start
until the last one's readiness probe answered (every informer synced); CPU: each replica's process_cpu_seconds_total
once every object was annotated and cached once. The replicas start on objects already annotated: this is what a
restart on a converged cluster costs (with GOGC=%d, which collects more often than the default).
`, rig.LiveGOGC, r.memoryWindow, rig.LiveGOGC)
}

// singleCacheHeap is the cache heap of the one replica, nil if not
// measured.
func (r *Results) singleCacheHeap() *child.Heap {
	for _, m := range r.memory {
		if m.replicas == 1 && len(m.heap) == 1 {
			c := m.cacheHeap(0)
			return &c
		}
	}
	return nil
}

func (r *Results) printTargets(w io.Writer) {
	fmt.Fprintf(w, "\n### Sharding targets\n\n")
	for _, line := range r.targets() {
		fmt.Fprintln(w, "- "+line)
	}
}

// targets checks the three targets on what was measured.
func (r *Results) targets() []string {
	var lines []string
	if single := r.singleCacheHeap(); single != nil {
		limit := (1 + heapSlack) / float64(r.shards)
		for _, m := range r.memory[1:] {
			worst := 0.0
			for i := range m.heap {
				worst = max(worst, m.cacheHeap(i).Inuse/single.Inuse)
			}
			lines = append(lines, fmt.Sprintf("%s: largest cache heap per replica ÷ 1 replica's %.3f, target ≤ 1/%d + %.0f%% = %.3f: %s",
				m.setup, worst, r.shards, heapSlack*100, limit, table.Met(worst <= limit)))
		}
	}
	if len(r.reshards) > 0 {
		worst := slices.MaxFunc(r.reshards, func(a, b reshardRun) int { return cmp.Compare(a.patchesPerObject(), b.patchesPerObject()) })
		all := !slices.ContainsFunc(r.reshards, func(rr reshardRun) bool { return rr.annotated != rr.objects })
		lines = append(lines, fmt.Sprintf("resharding: largest PATCH per object %.4f (round %d), target ≤ %.2f: %s; every object annotated at the end of every round: %s",
			worst.patchesPerObject(), worst.round, maxPatchesPerObject, table.Met(worst.patchesPerObject() <= maxPatchesPerObject), table.YesNo(all)))
	}
	if len(r.runs) > 0 {
		names := r.setups()
		single := r.median(names[0], shardRun.objectsPerSecond)
		for _, name := range names[1:] {
			rate := r.median(name, shardRun.objectsPerSecond)
			lines = append(lines, fmt.Sprintf("%s: median %s objects/s vs 1 replica's %s (÷ %s), target not below: %s",
				name, table.Num(rate, 0), table.Num(single, 0), table.Ratio(rate, single), table.Met(*rate >= *single)))
		}
	}
	return lines
}
