package rounds

import (
	"slices"
	"testing"

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
