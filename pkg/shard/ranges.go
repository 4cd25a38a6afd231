package shard

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"
)

// uidKey is the field that objects are sharded by.
const uidKey = "object.metadata.uid"

// Range is a range of the 64-bit hash space, from First to Last inclusive
// (the API server's ranges are [start, end); an inclusive Last lets the
// whole space be written without 2^64).
type Range struct {
	First, Last uint64
}

// Static returns the range of shard i of total: the i-th of total equal
// parts of the hash space. It requires 0 <= i < total.
func Static(i, total int) Range {
	return Range{First: bound(uint64(i), uint64(total)), Last: bound(uint64(i)+1, uint64(total)) - 1}
}

// bound is floor(i * 2^64 / total), for 0 <= i <= total; 2^64 (i == total)
// wraps to 0, so that bound(total, total)-1 is the last hash.
func bound(i, total uint64) uint64 {
	if i == total {
		return 0
	}
	q, _ := bits.Div64(i, 0, total)
	return q
}

// Contains reports whether h is in r.
func (r Range) Contains(h uint64) bool { return r.First <= h && h <= r.Last }

// size is the number of hashes in r, as a float (the whole space does not
// fit in a uint64).
func (r Range) size() float64 { return float64(r.Last-r.First) + 1 }

// String formats r as the API server's [start, end) in hex.
func (r Range) String() string {
	start, end := r.bounds()
	return "[" + start + ", " + end + ")"
}

// bounds are r's start and end as a shard selector writes them: 0x and 16
// lower-case hex digits, and 0x10000000000000000 for 2^64.
func (r Range) bounds() (start, end string) {
	start = fmt.Sprintf("0x%016x", r.First)
	if r.Last == math.MaxUint64 {
		return start, "0x10000000000000000"
	}
	return start, fmt.Sprintf("0x%016x", r.Last+1)
}

// Ranges is a set of ranges, sorted and with adjacent ranges merged.
type Ranges []Range

// NewRanges returns rs as a set: sorted, overlapping and adjacent ranges
// merged.
func NewRanges(rs ...Range) Ranges {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b Range) int {
		switch {
		case a.First < b.First:
			return -1
		case a.First > b.First:
			return 1
		}
		return 0
	})
	var out Ranges
	for _, r := range sorted {
		if n := len(out); n > 0 && (out[n-1].Last == math.MaxUint64 || r.First <= out[n-1].Last+1) {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Fraction is the part of the hash space that rs cover, from 0 to 1.
func (rs Ranges) Fraction() float64 {
	var n float64
	for _, r := range rs {
		n += r.size()
	}
	return n / math.Exp2(64)
}

// Contains reports whether a hash is in one of rs.
func (rs Ranges) Contains(h uint64) bool {
	for _, r := range rs {
		if r.Contains(h) {
			return true
		}
	}
	return false
}

// Selector is the API server's shard selector for rs, on metadata.uid.
func (rs Ranges) Selector() sharding.Selector {
	reqs := make([]sharding.ShardRangeRequirement, 0, len(rs))
	for _, r := range rs {
		start, end := r.bounds()
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: uidKey, Start: start, End: end})
	}
	return sharding.NewSelector(reqs...)
}

// String lists rs as [start, end) ranges.
func (rs Ranges) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, " ")
}
