package shard

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/uuid"
)

// members returns n member identities as replicas make them: a host name
// and a random suffix.
func members(n int) []string {
	ms := make([]string, n)
	for i := range ms {
		ms[i] = fmt.Sprintf("kube-annotator-%d_%s", i, uuid.NewUUID())
	}
	return ms
}

// moved is the part of the virtual ranges whose owner differs in a and b.
func moved(a, b Assignment) float64 {
	n := 0
	for v := range VirtualRanges {
		if a.OwnerOf(v) != b.OwnerOf(v) {
			n++
		}
	}
	return float64(n) / VirtualRanges
}

// Over many random sets of members: every range has exactly one owner,
// every member is within 15% of its share (within one range, in fact),
// and a join or a leave moves at most 1/N + 5% of the ranges, N the
// larger number of members.
func TestAssign(t *testing.T) {
	const trials = 300
	for _, n := range []int{1, 2, 3, 4, 5, 8} {
		t.Run(fmt.Sprintf("%d members", n), func(t *testing.T) {
			worstImbalance, worstJoin, worstLeave := 0.0, 0.0, 0.0
			for range trials {
				ms := members(n)
				a := Assign(ms)
				var union VSet
				total := 0
				for _, m := range ms {
					s := a.Of(m)
					if (union.Intersect(s) != VSet{}) {
						t.Fatalf("%s owns ranges that another member owns", m)
					}
					union = union.Union(s)
					total += s.Len()
					share := float64(VirtualRanges) / float64(n)
					worstImbalance = max(worstImbalance, math.Abs(float64(s.Len())-share)/share)
				}
				if total != VirtualRanges || union.Len() != VirtualRanges || math.Abs(union.Ranges().Fraction()-1) > 1e-9 {
					t.Fatalf("members own %d ranges covering %v of the space, want each of %d once", total, union.Ranges().Fraction(), VirtualRanges)
				}
				joined := Assign(append(ms, "new_"+string(uuid.NewUUID())))
				worstJoin = max(worstJoin, moved(a, joined))
				if n > 1 {
					worstLeave = max(worstLeave, moved(a, Assign(ms[1:])))
				}
			}
			t.Logf("worst of %d: imbalance %.3f, join moves %.3f (1/%d = %.3f), leave moves %.3f (1/%d = %.3f)",
				trials, worstImbalance, worstJoin, n+1, 1/float64(n+1), worstLeave, n, 1/float64(n))
			if worstImbalance > 0.15 {
				t.Errorf("a member is %.1f%% off its share, want within 15%%", 100*worstImbalance)
			}
			if limit := 1/float64(n+1) + 0.05; worstJoin > limit {
				t.Errorf("a join moves %.3f of the ranges, want at most %.3f", worstJoin, limit)
			}
			if limit := 1/float64(n) + 0.05; n > 1 && worstLeave > limit {
				t.Errorf("a leave moves %.3f of the ranges, want at most %.3f", worstLeave, limit)
			}
		})
	}
}

// Every member computes the same assignment, whatever the order it lists
// the members in.
func TestAssignDeterministic(t *testing.T) {
	ms := members(4)
	a := Assign(ms)
	b := Assign([]string{ms[2], ms[0], ms[3], ms[1], ms[0]})
	if a.Owner != b.Owner || !slices.Equal(a.Members, b.Members) {
		t.Errorf("assignment depends on the order of the members")
	}
}

func TestVSetString(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 3, 7, 9, 10, 1023}, "0-3,7,9-10,1023"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			var s VSet
			for _, v := range tc.in {
				s.Add(v)
			}
			if got := s.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			back, err := ParseVSet(tc.want)
			if err != nil || back != s {
				t.Errorf("ParseVSet(%q) = %v, %v; want the set back", tc.want, back, err)
			}
		})
	}
	for _, bad := range []string{"x", "3-1", "1024", "-1", "0-1024", "1,"} {
		if _, err := ParseVSet(bad); err == nil {
			t.Errorf("ParseVSet(%q) succeeded, want an error", bad)
		}
	}
}

// A virtual range's hashes map back to it, and its ranges are the
// static ranges of 1,024 shards.
func TestVRange(t *testing.T) {
	for _, v := range []int{0, 1, 511, 1023} {
		r := VRange(v)
		if VRangeOf(r.First) != v || VRangeOf(r.Last) != v {
			t.Errorf("VRange(%d) = %v maps back to %d and %d", v, r, VRangeOf(r.First), VRangeOf(r.Last))
		}
	}
}
