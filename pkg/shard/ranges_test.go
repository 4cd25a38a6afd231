package shard

import (
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

func TestStatic(t *testing.T) {
	tests := []struct {
		i, total int
		want     string
	}{
		{0, 1, "[0x0000000000000000, 0x10000000000000000)"},
		{0, 2, "[0x0000000000000000, 0x8000000000000000)"},
		{1, 2, "[0x8000000000000000, 0x10000000000000000)"},
		{0, 3, "[0x0000000000000000, 0x5555555555555555)"},
		{1, 3, "[0x5555555555555555, 0xaaaaaaaaaaaaaaaa)"},
		{2, 3, "[0xaaaaaaaaaaaaaaaa, 0x10000000000000000)"},
		{3, 4, "[0xc000000000000000, 0x10000000000000000)"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d of %d", tc.i, tc.total), func(t *testing.T) {
			if got := Static(tc.i, tc.total).String(); got != tc.want {
				t.Errorf("Static(%d, %d) = %s, want %s", tc.i, tc.total, got, tc.want)
			}
		})
	}
}

// The static shards of every total cover the hash space exactly once.
func TestStaticPartition(t *testing.T) {
	for total := 1; total <= 17; total++ {
		var sum float64
		next := uint64(0)
		for i := range total {
			r := Static(i, total)
			if r.First != next {
				t.Fatalf("total %d: shard %d starts at %#x, want %#x", total, i, r.First, next)
			}
			sum += NewRanges(r).Fraction()
			next = r.Last + 1
		}
		if next != 0 || math.Abs(sum-1) > 1e-9 {
			t.Errorf("total %d: shards end before 2^64 (next %#x) or cover %v of the space", total, next, sum)
		}
	}
}

func TestNewRanges(t *testing.T) {
	tests := []struct {
		name string
		in   []Range
		want string
	}{
		{"none", nil, ""},
		{"sorted", []Range{{10, 19}, {0, 4}}, "[0x0000000000000000, 0x0000000000000005) [0x000000000000000a, 0x0000000000000014)"},
		{"adjacent merged", []Range{{5, 9}, {0, 4}}, "[0x0000000000000000, 0x000000000000000a)"},
		{"overlapping merged", []Range{{0, 7}, {3, 4}, {5, 9}}, "[0x0000000000000000, 0x000000000000000a)"},
		{"up to the end", []Range{{math.MaxUint64 - 1, math.MaxUint64}, {0, math.MaxUint64 - 2}}, "[0x0000000000000000, 0x10000000000000000)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewRanges(tc.in...).String(); got != tc.want {
				t.Errorf("NewRanges(%v) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// Contains, on FNV-1a 64 of the UID, decides as the API server's selector
// evaluator does.
func TestContainsAgreesWithSelector(t *testing.T) {
	rs := NewRanges(Static(1, 3), Range{First: 0, Last: 0x1000}, Static(7, 8))
	sel := rs.Selector()
	for i := range 20000 {
		uid := types.UID(uuid.NewUUID())
		if i == 0 {
			uid = "" // FNV offset basis
		}
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{UID: uid}}
		want, err := sel.Matches(obj)
		if err != nil {
			t.Fatal(err)
		}
		h := fnv.New64a()
		h.Write([]byte(uid))
		if got := rs.Contains(h.Sum64()); got != want {
			t.Fatalf("uid %q (hash %#x): Contains %v, selector %v", uid, h.Sum64(), got, want)
		}
	}
}
