package sharding

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
)

func TestShardSetupArgs(t *testing.T) {
	setups := setupsOf(rig.Options{Shards: 3})
	for _, tc := range []struct {
		setup shardSetup
		i     int
		want  string
	}{
		{setups[0], 0, ""},
		{setups[1], 2, "--shard 2 --total-shards 3"},
		{setups[2], 1, "--shard-group g --leader-election-namespace default"},
	} {
		if got := strings.Join(tc.setup.args(tc.i, "g"), " "); got != tc.want {
			t.Errorf("%s, replica %d: args %q, want %q", tc.setup.name, tc.i, got, tc.want)
		}
	}
}

func TestShardTargets(t *testing.T) {
	const mib = 1 << 20
	base := child.Heap{Inuse: 10 * mib}
	r := &Results{shards: 2, objects: 100,
		memory: []shardMemory{
			{setup: "1 replica", replicas: 1, heap: []child.Heap{{Inuse: 30 * mib}}, base: base},
			{setup: "static", replicas: 2, heap: []child.Heap{{Inuse: 20 * mib}, {Inuse: 21 * mib}}, base: base},                         // 0.50, 0.55: met
			{setup: "group", replicas: 2, heap: []child.Heap{{Inuse: 21 * mib}, {Inuse: 22.2 * mib}}, base: child.Heap{Inuse: 11 * mib}}, // 0.50, 0.56: not met
		},
		reshards: []reshardRun{
			{round: 1, objects: 100, annotated: 100, run: rig.RequestCounts{Patch: 101}},
			{round: 2, objects: 100, annotated: 99, run: rig.RequestCounts{Patch: 102}},
		},
		runs: []shardRun{
			{setup: "1 replica", objects: 100, converge: 10 * time.Second},
			{setup: "static", objects: 100, converge: 5 * time.Second},
			{setup: "group", objects: 100, converge: 11 * time.Second},
		},
	}
	want := []string{
		"static: largest cache heap per replica ÷ 1 replica's 0.550, target ≤ 1/2 + 10% = 0.550: met",
		"group: largest cache heap per replica ÷ 1 replica's 0.560, target ≤ 1/2 + 10% = 0.550: NOT met",
		"resharding: largest PATCH per object 1.0200 (round 2), target ≤ 1.01: NOT met; every object annotated at the end of every round: NO",
		"static: median 20 objects/s vs 1 replica's 10 (÷ 2.00), target not below: met",
		"group: median 9 objects/s vs 1 replica's 10 (÷ 0.91), target not below: NOT met",
	}
	got := r.targets()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("targets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestShardSetupsPicked checks that --setups keeps the setups it names,
// in the benchmark's order.
func TestShardSetupsPicked(t *testing.T) {
	for _, tc := range []struct {
		setups []string
		want   []string
	}{
		{nil, []string{"single", "static", "group"}},
		{[]string{"static", "single"}, []string{"single", "static"}},
		{[]string{"single"}, []string{"single"}},
	} {
		var got []string
		for _, s := range setupsOf(rig.Options{Shards: 3, Setups: tc.setups}) {
			got = append(got, s.id)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("--setups %v: setups %v, want %v", tc.setups, got, tc.want)
		}
	}
}
