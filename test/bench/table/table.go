package table

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Median is the median of vs, nil if there are none.
func Median(vs []float64) *float64 {
	if len(vs) == 0 {
		return nil
	}
	vs = slices.Sorted(slices.Values(vs))
	m := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		m = (vs[len(vs)/2-1] + m) / 2
	}
	return &m
}

// Percentile is the nearest-rank percentile p of sorted values.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// MS is d in milliseconds, to a tenth.
func MS(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// MiB is kib KiB in MiB, to a tenth.
func MiB(kib int64) string { return fmt.Sprintf("%.1f", float64(kib)/1024) }

// Num is v with decimals decimals, or "n/a" when v is nil.
func Num(v *float64, decimals int) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", decimals, *v)
}

// Ratio is v ÷ base to two decimals, or "n/a" when either is nil or
// base is 0.
func Ratio(v, base *float64) string {
	if v == nil || base == nil || *base == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *v / *base)
}

// Met says whether a target was met.
func Met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// YesNo says yes or NO.
func YesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

// SumInts is the sum of vs.
func SumInts(vs []int64) int64 {
	var t int64
	for _, v := range vs {
		t += v
	}
	return t
}

// Joined formats vs with format, separated by slashes.
func Joined(vs []float64, format string) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprintf(format, v)
	}
	return strings.Join(s, " / ")
}

// JoinedKiB formats KiB counts in MiB, separated by slashes.
func JoinedKiB(vs []int64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = MiB(v)
	}
	return strings.Join(s, " / ")
}

// Sum is the sum of vs.
func Sum(vs []float64) float64 {
	t := 0.0
	for _, v := range vs {
		t += v
	}
	return t
}

// MiBs are byte counts in MiB, rounded to a tenth.
func MiBs(bytes []float64) []float64 {
	vs := make([]float64, len(bytes))
	for i, v := range bytes {
		vs[i] = float64(int(v/(1<<20)*10+0.5)) / 10
	}
	return vs
}

// SignedMS is d in milliseconds, with its sign.
func SignedMS(d time.Duration) string {
	return fmt.Sprintf("%+.1f", float64(d)/float64(time.Millisecond))
}
