package shard

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
)

// VirtualRanges is the number of equal ranges the hash space is cut into
// for dynamic sharding: the unit that members own and hand over. 1,024
// keep each member within about 15% of its share at 3 or 4 members, and
// the largest set of ranges a member can own (512, every other one) within
// the API server's limit on the length of a shard selector.
const VirtualRanges = 1024

// VRange is virtual range v, from 0 to VirtualRanges-1.
func VRange(v int) Range { return Static(v, VirtualRanges) }

// VRangeOf is the virtual range that holds hash h.
func VRangeOf(h uint64) int {
	return int(h / (1 << 64 / VirtualRanges))
}

// Assignment says which member owns each virtual range: Owner[v] is an
// index into Members.
type Assignment struct {
	// Members are the members' identities, sorted.
	Members []string
	// Owner is the owner of each virtual range.
	Owner [VirtualRanges]int
}

// Assign assigns every virtual range to one of members by rendezvous
// (highest random weight) hashing with bounded loads: each range, in
// order, goes to the member whose hash of the pair (member, range) is
// highest among those that hold fewer than VirtualRanges/N, rounded up. Every member computes the
// same from the same set of members, without talking to the others, and
// when a member joins or leaves, only the ranges it gains or loses move:
// about 1/N of them. members must not be empty.
func Assign(members []string) Assignment {
	a := Assignment{Members: slices.Clone(members)}
	slices.Sort(a.Members)
	a.Members = slices.Compact(a.Members)
	seeds := make([]uint64, len(a.Members))
	for i, m := range a.Members {
		h := fnv.New64a()
		h.Write([]byte(m))
		seeds[i] = h.Sum64()
	}
	// Bounded loads: a member takes no more than its share, rounded up,
	// and a range whose first choice is full goes to its next. Plain
	// rendezvous hashing leaves a member of 3 or 4 up to 20% off its
	// share; bounded, it moves hardly more ranges (about 1/N + 3%).
	capacity := (VirtualRanges + len(seeds) - 1) / len(seeds)
	load := make([]int, len(seeds))
	for v := range a.Owner {
		best, bestWeight := -1, uint64(0)
		for i, seed := range seeds {
			if w := mix(seed ^ mix(uint64(v)+1)); load[i] < capacity && (best < 0 || w > bestWeight) {
				best, bestWeight = i, w
			}
		}
		a.Owner[v] = best
		load[best]++
	}
	return a
}

// mix is splitmix64's finaliser: a bijection that spreads every input bit
// over every output bit, so that the weights of one member over adjacent
// ranges are independent.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Of returns the virtual ranges member owns, in order; none when it is
// not a member.
func (a Assignment) Of(member string) VSet {
	i, ok := slices.BinarySearch(a.Members, member)
	var s VSet
	if !ok {
		return s
	}
	for v, o := range a.Owner {
		if o == i {
			s.Add(v)
		}
	}
	return s
}

// OwnerOf is the member that owns virtual range v.
func (a Assignment) OwnerOf(v int) string { return a.Members[a.Owner[v]] }

// VSet is a set of virtual ranges.
type VSet [VirtualRanges / 64]uint64

// Add adds v to s.
func (s *VSet) Add(v int) { s[v/64] |= 1 << (v % 64) }

// Has reports whether v is in s.
func (s VSet) Has(v int) bool { return s[v/64]&(1<<(v%64)) != 0 }

// Len is the number of virtual ranges in s.
func (s VSet) Len() int {
	n := 0
	for v := range VirtualRanges {
		if s.Has(v) {
			n++
		}
	}
	return n
}

// Union is the ranges in s or o.
func (s VSet) Union(o VSet) VSet {
	for i := range s {
		s[i] |= o[i]
	}
	return s
}

// Intersect is the ranges in both s and o.
func (s VSet) Intersect(o VSet) VSet {
	for i := range s {
		s[i] &= o[i]
	}
	return s
}

// Ranges are the hash ranges of s, adjacent ones merged.
func (s VSet) Ranges() Ranges {
	var rs []Range
	for v := range VirtualRanges {
		if s.Has(v) {
			rs = append(rs, VRange(v))
		}
	}
	return NewRanges(rs...)
}

// String formats s as a list of virtual ranges and runs of them, e.g.
// "0-3,7,9-12"; ParseVSet reads it back.
func (s VSet) String() string {
	var b []byte
	for v := 0; v < VirtualRanges; v++ {
		if !s.Has(v) {
			continue
		}
		end := v
		for end+1 < VirtualRanges && s.Has(end+1) {
			end++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
		if end > v {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(end), 10)
		}
		v = end
	}
	return string(b)
}

// ParseVSet reads a set that VSet.String wrote.
func ParseVSet(str string) (VSet, error) {
	var s VSet
	if str == "" {
		return s, nil
	}
	for _, part := range strings.Split(str, ",") {
		first, last, isRun := strings.Cut(part, "-")
		lo, err := strconv.Atoi(first)
		if err != nil {
			return s, fmt.Errorf("virtual ranges %q: %w", str, err)
		}
		hi := lo
		if isRun {
			if hi, err = strconv.Atoi(last); err != nil {
				return s, fmt.Errorf("virtual ranges %q: %w", str, err)
			}
		}
		if lo < 0 || hi < lo || hi >= VirtualRanges {
			return s, fmt.Errorf("virtual ranges %q: %q is not within 0-%d", str, part, VirtualRanges-1)
		}
		for v := lo; v <= hi; v++ {
			s.Add(v)
		}
	}
	return s, nil
}
