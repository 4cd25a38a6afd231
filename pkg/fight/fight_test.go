package fight

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// step is one thing that happens to object "a" (or to key, when set),
// after the clock moved by after.
type step struct {
	after time.Duration
	op    string // "hold", "wrote", "sweep", "forget"
	key   string
	// change is what "hold" and "wrote" change: 0 or 1 sets annotation
	// team to one value, 2 to another.
	change int
	want   Verdict // of "hold"
}

func hold(after time.Duration, want Verdict) step { return step{after: after, op: "hold", want: want} }
func wrote(after time.Duration) step              { return step{after: after, op: "wrote"} }
func sweep(after time.Duration) step              { return step{after: after, op: "sweep"} }

// team is the change the steps write.
var team = changeOf("team=ours")

// fight is the first three writes, a second apart: the next is the fourth
// within Window.
var fight = []step{wrote(0), wrote(time.Second), wrote(time.Second)}

func TestDetector(t *testing.T) {
	s := time.Second
	tests := []struct {
		name  string
		steps []step
		// states and fighting are Len() at the end; ended are the keys
		// whose fight ended.
		states, fighting int
		ended            []string
	}{
		{name: "nothing written: nothing kept", steps: []step{hold(0, Verdict{})}},
		{name: "one write: no state", steps: []step{wrote(0), hold(s, Verdict{})}},
		{name: "two writes within the window: a state, no wait",
			steps: []step{wrote(0), wrote(30 * s), hold(s, Verdict{Writes: 2})}, states: 1},
		{name: "two writes more than a window apart: no state",
			steps: []step{wrote(0), wrote(61 * s), hold(s, Verdict{})}},
		{name: "a fourth write within the window starts a fight: it waits a second after the third",
			steps:  append(fight, hold(200*time.Millisecond, Verdict{Wait: 800 * time.Millisecond, Report: Started, Writes: 3, Fought: true})),
			states: 1, fighting: 1},
		{name: "asked again while it waits: the rest of the wait, reported once",
			steps: append(fight, hold(0, Verdict{Wait: s, Report: Started, Writes: 3, Fought: true}),
				hold(300*time.Millisecond, Verdict{Wait: 700 * time.Millisecond, Writes: 3, Fought: true}),
				hold(s, Verdict{Writes: 3, Fought: true})),
			states: 1, fighting: 1},
		{name: "each write in a fight doubles the wait",
			steps: append(fight, hold(0, Verdict{Wait: s, Report: Started, Writes: 3, Fought: true}),
				wrote(s), hold(0, Verdict{Wait: 2 * s, Writes: 3, Fought: true}),
				wrote(2*s), hold(s, Verdict{Wait: 3 * s, Writes: 3, Fought: true}),
				wrote(3*s), hold(0, Verdict{Wait: 8 * s, Writes: 3, Fought: true})),
			states: 1, fighting: 1},
		{name: "four writes spread over more than a window: no fight",
			steps:  []step{wrote(0), wrote(25 * s), wrote(25 * s), hold(25*s, Verdict{Writes: 2})},
			states: 1},
		{name: "a state not in a fight is swept a window after its last write",
			steps: []step{wrote(0), wrote(s), sweep(61 * s), hold(0, Verdict{})}},
		{name: "a fight ends after Quiet without a write",
			steps: append(fight, hold(0, Verdict{Wait: s, Report: Started, Writes: 3, Fought: true}),
				sweep(Quiet+s), hold(0, Verdict{})),
			ended: []string{"a"}},
		{name: "an ended fight starts afresh: a third write is no fight",
			steps: append(fight, hold(0, Verdict{Wait: s, Report: Started, Writes: 3, Fought: true}),
				wrote(Quiet+s), wrote(0), hold(0, Verdict{Writes: 2})),
			states: 1, ended: []string{"a"}},
		{name: "forgetting an object in a fight ends it",
			steps: append(fight, hold(0, Verdict{Wait: s, Report: Started, Writes: 3, Fought: true}), step{op: "forget"}, hold(0, Verdict{})),
			ended: []string{"a"}},
		{name: "a key written with other values is no fight: rules reloaded, a user relabelling; a state for a window",
			steps:  []step{wrote(0), {op: "wrote", change: 2}, wrote(0), {op: "wrote", change: 2}, hold(0, Verdict{})},
			states: 1},
		{name: "only the writes since the change last differed count",
			steps:  []step{{op: "wrote", change: 2}, wrote(0), wrote(0), hold(0, Verdict{Writes: 2})},
			states: 1},
		{name: "another change is not held in a fight, and ends it",
			steps: append(fight, hold(0, Verdict{Wait: s, Report: Started, Writes: 3, Fought: true}),
				step{op: "hold", change: 2, want: Verdict{}}, step{op: "wrote", change: 2}, hold(0, Verdict{})),
			states: 1, ended: []string{"a"}},
		{name: "objects are counted apart",
			steps: []step{wrote(0), {op: "wrote", key: "b"}, wrote(s), {op: "wrote", key: "c"}, wrote(0),
				{op: "hold", key: "b", want: Verdict{}}, hold(0, Verdict{Wait: s, Report: Started, Writes: 3, Fought: true})},
			states: 1, fighting: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
			var ended []string
			d := NewDetector(clk, func(k string) { ended = append(ended, k) })
			run(t, d, clk, tc.steps)
			if states, fighting := d.Len(); states != tc.states || fighting != tc.fighting {
				t.Errorf("Len() = %d, %d; want %d, %d", states, fighting, tc.states, tc.fighting)
			}
			if fmt.Sprint(ended) != fmt.Sprint(tc.ended) {
				t.Errorf("ended %v, want %v", ended, tc.ended)
			}
		})
	}
}

func run(t *testing.T, d *Detector[string], clk *clocktesting.FakePassiveClock, steps []step) {
	t.Helper()
	for i, st := range steps {
		clk.SetTime(clk.Now().Add(st.after))
		k, change := st.key, changeOf("team=ours")
		if k == "" {
			k = "a"
		}
		if st.change == 2 {
			change = changeOf("team=theirs")
		}
		switch st.op {
		case "hold":
			if got := d.Hold(k, change); got != st.want {
				t.Fatalf("step %d: Hold(%s) = %+v, want %+v", i, k, got, st.want)
			}
		case "wrote":
			d.Wrote(k, change)
		case "sweep":
			d.Sweep()
		case "forget":
			d.Forget(k)
		default:
			t.Fatalf("step %d: unknown op %q", i, st.op)
		}
	}
}

// The waits of a fight that goes on: 1 s, 2 s, 4 s … up to BackoffMax,
// each write made as soon as it may; it is reported again every Quiet.
func TestDetectorBackoffCapAndReports(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	d := NewDetector[string](clk, nil)
	run(t, d, clk, fight)
	var waits []time.Duration
	reports := map[Report][]time.Duration{}
	start := clk.Now()
	for clk.Now().Sub(start) < time.Hour {
		v := d.Hold("a", team)
		if v.Report != None {
			reports[v.Report] = append(reports[v.Report], clk.Now().Sub(start).Round(time.Minute))
		}
		waits = append(waits, v.Wait)
		clk.SetTime(clk.Now().Add(v.Wait))
		d.Wrote("a", team)
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 64, 128, 256}
	for i, w := range want {
		if waits[i] != w*time.Second {
			t.Fatalf("waits %v, want them to start %v seconds", waits[:len(want)], want)
		}
	}
	for _, w := range waits[len(want):] {
		if w != BackoffMax {
			t.Fatalf("waits %v, want %v after the doubling", waits, BackoffMax)
		}
	}
	// 511 s of doubling, then one write every 5 minutes: 9 + 10 writes
	// in an hour, where a loop without backoff writes thousands.
	if len(waits) > 20 {
		t.Errorf("%d writes in an hour, want at most 20", len(waits))
	}
	if len(reports[Started]) != 1 || len(reports[Continues]) < 4 {
		t.Errorf("reports %v, want one Started and a Continues about every %v", reports, Quiet)
	}
}

// An object written once leaves a fingerprint, no state, and the
// fingerprints of a window are gone two windows later.
func TestDetectorKeepsLittle(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	d := NewDetector[string](clk, nil)
	for i := range 1000 {
		d.Wrote(fmt.Sprint(i), team)
	}
	if states, _ := d.Len(); states != 0 {
		t.Errorf("%d states after one write to each object, want 0", states)
	}
	if len(d.recent) != 1000 {
		t.Errorf("%d fingerprints, want 1000", len(d.recent))
	}
	clk.SetTime(clk.Now().Add(2 * Window))
	d.Sweep()
	if len(d.recent)+len(d.older) != 0 {
		t.Errorf("%d fingerprints two windows later, want 0", len(d.recent)+len(d.older))
	}
}

// BenchmarkFirstWrite measures what one first write to an object costs
// the detector, in bytes held until the fingerprint is dropped.
func BenchmarkFirstWrite(b *testing.B) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	type key struct{ ns, name string }
	keys := make([]key, b.N)
	for i := range keys {
		keys[i] = key{"ns", fmt.Sprint(i)}
	}
	d := NewDetector[key](clk, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for _, k := range keys {
		d.Wrote(k, team)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "heap-B/object")
	runtime.KeepAlive(d)
	runtime.KeepAlive(keys)
}

func TestChangeOf(t *testing.T) {
	v := func(s string) *string { return &s }
	base := patch.Change{Annotations: map[string]*string{"a": v("1"), "b": nil}, Labels: map[string]*string{"l": v("x")}}
	tests := []struct {
		name string
		ch   patch.Change
		same bool
	}{
		{"the same change, built anew", patch.Change{Labels: map[string]*string{"l": v("x")}, Annotations: map[string]*string{"b": nil, "a": v("1")}}, true},
		{"another value", patch.Change{Annotations: map[string]*string{"a": v("2"), "b": nil}, Labels: map[string]*string{"l": v("x")}}, false},
		{"a deletion is not an empty value", patch.Change{Annotations: map[string]*string{"a": v("1"), "b": v("")}, Labels: map[string]*string{"l": v("x")}}, false},
		{"a label is not an annotation", patch.Change{Annotations: map[string]*string{"a": v("1"), "b": nil, "l": v("x")}}, false},
		{"a key fewer", patch.Change{Annotations: map[string]*string{"a": v("1")}, Labels: map[string]*string{"l": v("x")}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ChangeOf(tc.ch).sum == ChangeOf(base).sum; got != tc.same {
				t.Errorf("ChangeOf(%v) == ChangeOf(%v): %v, want %v", tc.ch, base, got, tc.same)
			}
		})
	}
}
