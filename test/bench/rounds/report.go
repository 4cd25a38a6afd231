package rounds

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
)

// Runs are the runs of every round with one shape of objects, in the
// order they ran.
type Runs []Result

// Print writes the runs as markdown tables: medians per runner, what the
// control plane spent on each, and every run.
func (s Runs) Print(w io.Writer, shape string, o rig.Options) {
	s.printSummary(w, shape, o)
	s.printRuns(w, shape)
}

// column is one column of the summary: how to read it from a run; nil
// values (not applicable to the run) are left out of the median.
type column func(Result) *float64

func val(v float64) *float64 { return &v }

var (
	colFirst     column = func(r Result) *float64 { return val(r.first.Seconds()) }
	colConverge  column = func(r Result) *float64 { return val(r.converge.Seconds()) }
	colRate      column = func(r Result) *float64 { return val(r.objectsPerSecond()) }
	colPatch     column = func(r Result) *float64 { return val(float64(r.run.Patch)) }
	colGet       column = func(r Result) *float64 { return val(float64(r.run.Get)) }
	colList      column = func(r Result) *float64 { return val(float64(r.run.List)) }
	colRSS       column = func(r Result) *float64 { return val(float64(r.peakRSS) / 1024) }
	colCPU       column = func(r Result) *float64 { return val(r.cpu / float64(r.objects) * 10000) }
	colAPICPU    column = func(r Result) *float64 { return val(r.control.APIServer / float64(r.objects) * 10000) }
	colEtcdCPU   column = func(r Result) *float64 { return val(r.control.Etcd / float64(r.objects) * 10000) }
	colSteady    column = func(r Result) *float64 { return writes(r.steady) }
	colRestarted column = func(r Result) *float64 { return writes(r.restart) }
	colRestRSS   column = func(r Result) *float64 {
		if r.steady == nil {
			return nil
		}
		return val(float64(r.restRSS) / 1024)
	}
)

func writes(c *rig.RequestCounts) *float64 {
	if c == nil {
		return nil
	}
	return val(float64(c.Writes))
}

// median returns the median of col over the runs of runner, or nil.
func (s Runs) median(runner string, col column) *float64 {
	var vs []float64
	for _, run := range s {
		if v := col(run); run.runner == runner && v != nil {
			vs = append(vs, *v)
		}
	}
	return table.Median(vs)
}

// roundRatio is the median, over the rounds, of col's value for runner
// divided by its value for base in the same round: runs of one round ran
// minutes apart, under more similar load than runs of different rounds.
func (s Runs) roundRatio(runner, base string, col column) *float64 {
	byRound := map[int]float64{}
	for _, run := range s {
		if v := col(run); run.runner == base && v != nil && *v > 0 {
			byRound[run.round] = *v
		}
	}
	var ratios []float64
	for _, run := range s {
		d, ok := byRound[run.round]
		if v := col(run); run.runner == runner && v != nil && ok {
			ratios = append(ratios, *v/d)
		}
	}
	return table.Median(ratios)
}

// runnerNames are the runners of s's runs, in the order in which they ran.
func (s Runs) runnerNames() []string {
	var names []string
	for _, run := range s {
		if !slices.Contains(names, run.runner) {
			names = append(names, run.runner)
		}
	}
	return names
}

func (s Runs) printSummary(w io.Writer, shape string, o rig.Options) {
	rounds := 0
	for _, run := range s {
		rounds = max(rounds, run.round)
	}
	reads := "a GET to the API server per Reconcile (controller-runtime's default for unstructured objects)"
	if o.CRCacheReads {
		reads = "reads from its cache (--cr-cache-reads)"
	}
	fmt.Fprintf(w, "\n## %d %s objects, %d workers: medians of %d round(s)\n\n", s[0].objects, shape, o.Workers, rounds)
	fmt.Fprintln(w, "| runner | first (s) | converge (s) | objects/s | ÷ raw | ÷ raw-metadata | ÷ controller-runtime | PATCH | GET | LIST | writes in steady state | writes after restart |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	rawRate, rawMetaRate, crRate := s.median(rig.RawRunner, colRate), s.median(rig.RawMetadataRunner, colRate), s.median(rig.CRRunner, colRate)
	for _, name := range s.runnerNames() {
		rate := s.median(name, colRate)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
			table.Num(s.median(name, colFirst), 1), table.Num(s.median(name, colConverge), 1), table.Num(rate, 0),
			table.Ratio(rate, rawRate), table.Ratio(rate, rawMetaRate), table.Ratio(rate, crRate),
			table.Num(s.median(name, colPatch), 0), table.Num(s.median(name, colGet), 0), table.Num(s.median(name, colList), 0),
			table.Num(s.median(name, colSteady), 0), table.Num(s.median(name, colRestarted), 0))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| runner | CPU (s) per 10k objects | ÷ raw | ÷ raw-metadata | peak RSS (MiB) | ÷ controller-runtime | RSS at rest (MiB) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	rawCPU, rawMetaCPU, crRSS := s.median(rig.RawRunner, colCPU), s.median(rig.RawMetadataRunner, colCPU), s.median(rig.CRRunner, colRSS)
	for _, name := range s.runnerNames() {
		cpu, rss := s.median(name, colCPU), s.median(name, colRSS)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", name,
			table.Num(cpu, 2), table.Ratio(cpu, rawCPU), table.Ratio(cpu, rawMetaCPU), table.Num(rss, 1), table.Ratio(rss, crRSS), table.Num(s.median(name, colRestRSS), 1))
	}
	s.printControlPlane(w)
	fmt.Fprintf(w, `
first, converge: from the runner's start until the benchmark's watch saw the first object, and every object, annotated.
objects/s: objects ÷ converge.
PATCH, GET, LIST: requests the API server served on the four resources from the start until %v after that.
  The controllers' informers sync with a streaming WATCH (client-go's WatchListClient), which is not a LIST.
Writes: during %v of steady state, and during %v after a restart; both should be 0 (controllers only: the raw loops exit when done).
  kube-annotator runs with --resync-period %v (unless a --variant sets another), so each window holds at least one resync of every object.
  A convergence that lasts longer than that period also syncs every object cached so far once per period, which its CPU counts
  and the raw loops never do: a variant with --resync-period=0 measures the convergence alone.
CPU: user and system time of the runner's process from its start until every object was annotated (the raw loops: until they exited).
kube-apiserver, etcd: their process_cpu_seconds_total from just before the runner's start until every object was annotated;
  ratios per run (each run ÷ the raw-metadata run of its round), then their median.
Peak RSS: of the runner's first process; RSS at rest: at the end of steady state. controller-runtime: %s.
`, rig.Settle, o.Steady, o.Steady, o.Steady, reads)
}

func (s Runs) printRuns(w io.Writer, shape string) {
	fmt.Fprintf(w, "\n### Every run, %s objects\n\n", shape)
	fmt.Fprintln(w, "| runner | round | first (s) | converge (s) | objects/s | PATCH | GET | LIST | WATCH | CPU (s) | kube-apiserver CPU (s) | etcd CPU (s) | steady state: writes, GET, LIST | after restart: writes, GET, LIST | peak RSS (MiB) | RSS at rest (MiB) | after restart: peak RSS (MiB) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, run := range s {
		restRSS, restartRSS := "n/a", "n/a"
		if run.steady != nil {
			restRSS = table.MiB(run.restRSS)
		}
		if run.restart != nil {
			restartRSS = table.MiB(run.restartRSS)
		}
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.0f | %d | %d | %d | %d | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s |\n", run.runner, run.round,
			run.first.Seconds(), run.converge.Seconds(), run.objectsPerSecond(), run.run.Patch, run.run.Get, run.run.List, run.run.Watch,
			run.cpu, run.control.APIServer, run.control.Etcd, triple(run.steady), triple(run.restart), table.MiB(run.peakRSS), restRSS, restartRSS)
	}
	fmt.Fprintln(w, "\nWATCH: watch requests that ended in the window (the API server counts a watch when it ends).")
}

// printControlPlane prints what the control plane spent on each runner.
func (s Runs) printControlPlane(w io.Writer) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| runner | kube-apiserver CPU (s) per 10k objects | ÷ raw-metadata | ÷ raw-metadata, per round | etcd CPU (s) per 10k objects | ÷ raw-metadata, per round |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	rawMeta := s.median(rig.RawMetadataRunner, colAPICPU)
	for _, name := range s.runnerNames() {
		api := s.median(name, colAPICPU)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", name, table.Num(api, 2), table.Ratio(api, rawMeta),
			table.Num(s.roundRatio(name, rig.RawMetadataRunner, colAPICPU), 2),
			table.Num(s.median(name, colEtcdCPU), 2), table.Num(s.roundRatio(name, rig.RawMetadataRunner, colEtcdCPU), 2))
	}
}

func triple(c *rig.RequestCounts) string {
	if c == nil {
		return "n/a"
	}
	return strings.Join([]string{fmt.Sprint(c.Writes), fmt.Sprint(c.Get), fmt.Sprint(c.List)}, ", ")
}
