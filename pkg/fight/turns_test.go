package fight

import (
	"fmt"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// changeOf builds the changes of the turns tests: "team=ours" sets
// annotation team, "tier=" deletes it, "label:app=web" sets a label.
func changeOf(kvs ...string) Change {
	ch := patch.Change{Annotations: map[string]*string{}, Labels: map[string]*string{}}
	for _, kv := range kvs {
		m := ch.Annotations
		if len(kv) > 6 && kv[:6] == "label:" {
			m, kv = ch.Labels, kv[6:]
		}
		for i := range kv {
			if kv[i] == '=' {
				v := kv[i+1:]
				m[kv[:i]] = &v
				if v == "" {
					m[kv[:i]] = nil
				}
				break
			}
		}
	}
	return ChangeOf(ch)
}

// Other field managers revert what the controller writes, in turns: each
// write is the controller's answer to one revert, 100 ms after it. The
// fight must be found by the write that is the fourth within the window
// to set one key to one value again, whoever reverted it.
func TestDetectorTurns(t *testing.T) {
	all := changeOf("team=ours", "tier=web")
	team, tier, label := changeOf("team=ours"), changeOf("tier=web"), changeOf("label:app=web")
	tests := []struct {
		name   string
		writes []Change
		// next is the write asked for after them; started is whether it
		// starts a fight.
		next    Change
		started bool
	}{
		// Who reverted the key the detector does not see: one manager or
		// two in turn make the same writes.
		{"one manager, or two in turn, revert the key", []Change{team, team, team}, team, true},
		{"A reverts team, B tier, in turn: the first write sets both",
			[]Change{all, team, tier, team, tier, team, tier}, team, true},
		{"A reverts team, B tier, in turn from the start: counted from the third write",
			[]Change{tier, team, tier, team, tier, team, tier, team}, tier, true},
		{"A reverts both keys, B only team", []Change{all, team, all, team}, team, true},
		{"A reverts team, B deletes a label the controller sets",
			[]Change{team, label, team, label, team, label, team}, team, true},
		{"the first write counts for its keys only when the second makes the same change: team three times, no fight yet", []Change{all, team, tier, team}, team, false},
		{"a key set to other values is no fight: rules reloaded, inputs relabelled",
			[]Change{changeOf("team=a"), changeOf("team=b"), changeOf("team=a"), changeOf("team=b")}, changeOf("team=a"), false},
		{"two keys each written twice are no fight", []Change{team, tier, team, tier}, team, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
			d := NewDetector[string](clk, nil)
			for _, ch := range tc.writes {
				if v := d.Hold("a", ch); v.Wait != 0 {
					t.Fatalf("a write before the last waits %v", v.Wait)
				}
				d.Wrote("a", ch)
				clk.SetTime(clk.Now().Add(100 * time.Millisecond))
			}
			v := d.Hold("a", tc.next)
			if started := v.Report == Started; started != tc.started || started != (v.Wait > 0) {
				t.Errorf("Hold() = %+v, want started %v", v, tc.started)
			}
		})
	}
}

// What is kept of one object is bounded: MaxKeys keys, the ones written
// last, and MaxManagers managers, the first seen, none while no fight.
func TestDetectorBounds(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	d := NewDetector[string](clk, nil)
	if m, added := d.Saw("a", "x"); m != nil || added {
		t.Errorf("Saw() before a fight = %v, %v; want nothing kept", m, added)
	}
	for i := range 40 {
		d.Wrote("a", changeOf(fmt.Sprintf("k%d=v", i%20)))
		clk.SetTime(clk.Now().Add(100 * time.Millisecond))
	}
	if n := len(d.states["a"].keys); n != MaxKeys {
		t.Errorf("%d keys kept after writes of 20, want %d", n, MaxKeys)
	}
	for range Writes {
		d.Wrote("a", changeOf("team=ours"))
	}
	if v := d.Hold("a", changeOf("team=ours")); v.Report != Started {
		t.Fatalf("Hold() = %+v, want a fight started over the key written last", v)
	}
	var got []string
	for _, m := range []string{Unknown, "a", "b", "a", "c", "d"} {
		got, _ = d.Saw("a", m)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("managers %v, want %v", got, want)
	}
}

// In a fight, a write of another key goes at once and the fight goes
// on; a key that reaches the count joins the fight; the fight ends once
// each key fought over is written with another value.
func TestDetectorFightKeys(t *testing.T) {
	team, tier := changeOf("team=ours"), changeOf("tier=web")
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	var ended int
	d := NewDetector(clk, func(string) { ended++ })
	for range Writes {
		d.Wrote("a", team)
	}
	if v := d.Hold("a", team); v.Report != Started || !v.Fought {
		t.Fatalf("Hold(team) = %+v, want a fight started", v)
	}
	for i := range Writes {
		if v := d.Hold("a", tier); v.Wait != 0 || v.Fought {
			t.Fatalf("Hold(tier) #%d = %+v, want it to go at once", i+1, v)
		}
		d.Wrote("a", tier)
	}
	if v := d.Hold("a", tier); !v.Fought || v.Wait == 0 || v.Report != None {
		t.Fatalf("Hold(tier) = %+v, want it held in the fight", v)
	}
	if _, fighting := d.Len(); fighting != 1 {
		t.Fatalf("%d objects in a fight, want 1", fighting)
	}
	d.Wrote("a", changeOf("team=new"))
	if _, fighting := d.Len(); fighting != 1 || ended != 0 {
		t.Fatalf("%d objects in a fight, %d ended, after team changed value; want tier still fought over", fighting, ended)
	}
	d.Wrote("a", changeOf("tier="))
	if _, fighting := d.Len(); fighting != 0 || ended != 1 {
		t.Errorf("%d objects in a fight, %d ended, after both changed; want the fight ended", fighting, ended)
	}
	if m, _ := d.Saw("a", "x"); m != nil {
		t.Errorf("managers %v after the fight ended, want none", m)
	}
}
