package rounds

import (
	"fmt"
	"io"
	"slices"

	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
)

// The targets docs/performance.md judges kube-annotator on, against the
// raw loop through the metadata client in the same rounds.
const (
	// maxCPURatio is the most CPU per object kube-annotator may use, as a
	// multiple of raw-metadata's.
	maxCPURatio = 1.2
	// minRateRatio is the least throughput, as a multiple of
	// raw-metadata's and of raw-metadata-watch's.
	minRateRatio = 1.0
	// maxRestBytes is the most RSS at rest per small object, in bytes.
	maxRestBytes = 600
	// maxPeakToRest is the most the peak RSS may be, as a multiple of the
	// RSS at rest.
	maxPeakToRest = 1.5
)

// isBaseline says whether runner is one of the loops or controllers
// kube-annotator is measured against rather than one of its own builds.
func isBaseline(runner string) bool {
	return slices.Contains([]string{rig.RawRunner, rig.RawMetadataRunner, rig.RawMetadataWatchRunner, rig.CRRunner}, runner)
}

// target is one row of the targets' table: a target, what was measured
// and whether it is met; nil measured values are runs that did not
// happen.
type target struct {
	what     string
	measured *float64
	format   string             // of measured
	met      func(float64) bool // nil: a comparison, not a target
	// limit is what the loop that also watches measured of the same.
	limit *float64
	// smallOnly: the target is for small objects alone.
	smallOnly bool
}

// targets are the targets of runner's runs; baseRest is the RSS at rest,
// in KiB, of kube-annotator with no objects.
func (s Runs) targets(runner string, baseRest int64) []target {
	watchCPU := s.roundRatio(rig.RawMetadataWatchRunner, rig.RawMetadataRunner, colCPU)
	watchRate := s.roundRatio(rig.RawMetadataWatchRunner, rig.RawMetadataRunner, colRate)
	return []target{
		{what: fmt.Sprintf("CPU per object ≤ %.1f× raw-metadata's", maxCPURatio), measured: s.roundRatio(runner, rig.RawMetadataRunner, colCPU),
			format: "%.2f×", met: func(v float64) bool { return v <= maxCPURatio }, limit: watchCPU},
		// Not a target: what the controller costs above the loop that watches.
		{what: "CPU per object ÷ raw-metadata-watch's", measured: s.roundRatio(runner, rig.RawMetadataWatchRunner, colCPU), format: "%.2f×"},
		{what: fmt.Sprintf("objects/s ≥ %.1f× raw-metadata's", minRateRatio), measured: s.roundRatio(runner, rig.RawMetadataRunner, colRate),
			format: "%.2f×", met: func(v float64) bool { return v >= minRateRatio }, limit: watchRate},
		{what: fmt.Sprintf("objects/s ≥ %.1f× raw-metadata-watch's", minRateRatio), measured: s.roundRatio(runner, rig.RawMetadataWatchRunner, colRate),
			format: "%.2f×", met: func(v float64) bool { return v >= minRateRatio }},
		{what: fmt.Sprintf("RSS at rest per small object ≤ %d bytes", maxRestBytes), measured: s.restPerObject(runner, baseRest),
			format: "%.0f bytes", met: func(v float64) bool { return v <= maxRestBytes }, smallOnly: true},
		{what: fmt.Sprintf("peak RSS ≤ %.1f× the RSS at rest", maxPeakToRest), measured: s.median(runner, colPeakToRest),
			format: "%.2f×", met: func(v float64) bool { return v <= maxPeakToRest }},
	}
}

// colPeakToRest is a controller's peak RSS divided by its RSS at rest.
var colPeakToRest column = func(r Result) *float64 {
	if r.steady == nil || r.restRSS == 0 {
		return nil
	}
	return val(float64(r.peakRSS) / float64(r.restRSS))
}

// restPerObject is the median RSS at rest of runner above baseRest (KiB),
// in bytes per object, or nil.
func (s Runs) restPerObject(runner string, baseRest int64) *float64 {
	rest := s.median(runner, colRestRSS) // MiB
	if rest == nil || baseRest <= 0 || len(s) == 0 {
		return nil
	}
	return val((*rest*1024 - float64(baseRest)) * 1024 / float64(s[0].objects))
}

// PrintTargets writes, for each of kube-annotator's runners, the targets
// of docs/performance.md measured in these rounds, and the same ratios of
// raw-metadata-watch, which any controller's cost includes. baseRest is
// the RSS at rest, in KiB, of kube-annotator with no objects (0: unknown).
func (s Runs) PrintTargets(w io.Writer, shape string, baseRest int64) {
	if len(s) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Targets, %d %s objects: medians of the rounds' ratios\n\n", s[0].objects, shape)
	fmt.Fprintln(w, "| runner | target | measured | | raw-metadata-watch |")
	fmt.Fprintln(w, "| --- | --- | ---: | --- | ---: |")
	for _, name := range s.runnerNames() {
		if isBaseline(name) {
			continue
		}
		for _, t := range s.targets(name, baseRest) {
			if t.smallOnly && shape != "small" {
				continue
			}
			measured, met, limit := "n/a", "n/a", ""
			switch {
			case t.measured == nil:
			case t.met == nil:
				measured, met = fmt.Sprintf(t.format, *t.measured), ""
			default:
				measured, met = fmt.Sprintf(t.format, *t.measured), table.Met(t.met(*t.measured))
			}
			if t.limit != nil {
				limit = fmt.Sprintf(t.format, *t.limit)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", name, t.what, measured, met, limit)
		}
	}
	fmt.Fprintln(w, `
Ratios: each run's value divided by that of the runner named in the same round, then the median over the rounds.
raw-metadata-watch: the same ratio of the raw loop that also watches, the least a controller's loop does.
RSS at rest per object (small objects): the median RSS at the end of steady state, less kube-annotator's RSS at
rest with no objects, divided by the objects.`)
}
