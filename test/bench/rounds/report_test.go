package rounds

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/rig"
)

func TestRoundRatio(t *testing.T) {
	run := func(runner string, round int, apiCPU float64) Result {
		return Result{runner: runner, round: round, objects: 10000, control: rig.CPUTimes{APIServer: apiCPU}}
	}
	s := Runs{
		run(rig.RawMetadataRunner, 1, 30), run(rig.KARunner, 1, 33),
		run(rig.RawMetadataRunner, 2, 60), run(rig.KARunner, 2, 90), // a loaded round
		run(rig.RawMetadataRunner, 3, 40), run(rig.KARunner, 3, 44),
		run(rig.KARunner, 4, 1000), // no baseline in its round: left out
	}
	got := s.roundRatio(rig.KARunner, rig.RawMetadataRunner, colAPICPU)
	if got == nil || *got < 1.0999 || *got > 1.1001 {
		t.Errorf("roundRatio = %v, want the median of 1.1, 1.5, 1.1: 1.1", got)
	}
	if got := s.roundRatio(rig.CRRunner, rig.RawMetadataRunner, colAPICPU); got != nil {
		t.Errorf("roundRatio of a runner that did not run = %v, want nil", *got)
	}
	if names := s.runnerNames(); !slices.Equal(names, []string{rig.RawMetadataRunner, rig.KARunner}) {
		t.Errorf("runnerNames = %q", names)
	}
}

func TestTargets(t *testing.T) {
	// run is one run of 10,000 objects taking cpu seconds and converging
	// in seconds; a controller's peak and rest RSS are in MiB.
	run := func(runner string, round int, cpu, seconds float64, peak, rest int64) Result {
		r := Result{runner: runner, round: round, objects: 10000, cpu: cpu, converge: time.Duration(seconds * float64(time.Second))}
		if rest > 0 {
			r.steady, r.peakRSS, r.restRSS = &rig.RequestCounts{}, peak*1024, rest*1024
		}
		return r
	}
	s := Runs{
		run(rig.RawMetadataRunner, 1, 4, 20, 0, 0), run(rig.RawMetadataWatchRunner, 1, 5, 25, 0, 0), run(rig.KARunner, 1, 6, 20, 60, 50),
		run(rig.RawMetadataRunner, 2, 8, 40, 0, 0), run(rig.RawMetadataWatchRunner, 2, 10, 50, 0, 0), run(rig.KARunner, 2, 8, 40, 60, 50), // a loaded round
		run(rig.RawMetadataRunner, 3, 4, 20, 0, 0), run(rig.RawMetadataWatchRunner, 3, 5, 25, 0, 0), run(rig.KARunner, 3, 4.4, 25, 90, 50),
	}
	got := map[string]target{}
	for _, tg := range s.targets(rig.KARunner, 45*1024) {
		got[tg.what] = tg
	}
	tests := []struct {
		what        string
		want, limit float64 // limit 0: none
		met         bool
	}{
		// CPU ratios 1.5, 1.0, 1.1: the median 1.1; the watching loop's 1.25.
		{"CPU per object ≤ 1.2× raw-metadata's", 1.1, 1.25, true},
		// 6/5, 8/10, 4.4/5.
		{"CPU per object ÷ raw-metadata-watch's", 0.88, 0, false}, // not judged
		// rates 500, 250, 400 against 500, 250, 500.
		{"objects/s ≥ 1.0× raw-metadata's", 1.0, 0.8, true},
		// against 400, 200, 400.
		{"objects/s ≥ 1.0× raw-metadata-watch's", 1.25, 0, true},
		// 5 MiB above the 45 MiB with none, over 10,000 objects.
		{"RSS at rest per small object ≤ 600 bytes", 5 * 1024 * 1024 / 10000.0, 0, true},
		// 1.2, 1.2, 1.8.
		{"peak RSS ≤ 1.5× the RSS at rest", 1.2, 0, true},
	}
	for _, tt := range tests {
		tg, ok := got[tt.what]
		if !ok {
			t.Errorf("no target %q", tt.what)
			continue
		}
		if tg.measured == nil || math.Abs(*tg.measured-tt.want) > 1e-9 {
			t.Errorf("%s: measured %v, want %v", tt.what, tg.measured, tt.want)
			continue
		}
		if judged := tg.met != nil; judged && tg.met(*tg.measured) != tt.met || !judged && tt.met {
			t.Errorf("%s: judged %v, met %v; want met %v", tt.what, judged, judged && tg.met(*tg.measured), tt.met)
		}
		if tt.limit != 0 && (tg.limit == nil || math.Abs(*tg.limit-tt.limit) > 1e-9) {
			t.Errorf("%s: raw-metadata-watch %v, want %v", tt.what, tg.limit, tt.limit)
		}
	}
	if tg := s.targets(rig.KARunner, 40*1024)[4]; tg.measured == nil || tg.met(*tg.measured) {
		t.Errorf("RSS at rest per object 10 MiB above the baseline, over 10,000 objects: %v judged met", tg.measured)
	}
	if tg := s.targets(rig.KARunner, 0)[4]; tg.measured != nil {
		t.Errorf("RSS at rest per object with no baseline = %v, want none", *tg.measured)
	}
	var out strings.Builder
	s.PrintTargets(&out, "small", 45*1024)
	for _, runner := range []string{rig.RawMetadataRunner, rig.RawMetadataWatchRunner} {
		if strings.Contains(out.String(), "\n| "+runner+" |") {
			t.Errorf("PrintTargets judged the baseline %s:\n%s", runner, out.String())
		}
	}
	if n := strings.Count(out.String(), "\n| "+rig.KARunner+" |"); n != 6 {
		t.Errorf("PrintTargets printed %d rows of kube-annotator, want 6:\n%s", n, out.String())
	}
	out.Reset()
	s.PrintTargets(&out, "realistic", 45*1024)
	if n := strings.Count(out.String(), "\n| "+rig.KARunner+" |"); n != 5 || strings.Contains(out.String(), "RSS at rest per small object") {
		t.Errorf("PrintTargets printed %d rows of kube-annotator for realistic objects, want 5, without RSS per small object:\n%s", n, out.String())
	}
}
