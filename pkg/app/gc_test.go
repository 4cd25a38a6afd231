package app

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	prevGC, prevLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(prevGC); debug.SetMemoryLimit(prevLimit) })
	const none = int64(math.MaxInt64)
	tests := []struct {
		name      string
		env       map[string]string
		runtime   int64 // the limit the runtime read from GOMEMLIMIT; 0: none
		cgroup    int64 // 0: none
		wantGC    int
		wantLimit int64
	}{
		{"nothing set, no limit: the controller's default", nil, 0, 0, defaultGCPercent, none},
		{"GOGC set: the runtime's, untouched", map[string]string{"GOGC": "200"}, 0, 0, 100, none},
		{"GOGC set empty: untouched too", map[string]string{"GOGC": ""}, 0, 0, 100, none},
		{"a cgroup limit: soft limit from it, GOGC for a limit", nil, 0, 1000 << 20, limitedGCPercent, 900 << 20},
		{"GOMEMLIMIT set: the cgroup is not read, GOGC for a limit", map[string]string{"GOMEMLIMIT": "256MiB"}, 256 << 20, 1000 << 20, limitedGCPercent, 256 << 20},
		{"GOMEMLIMIT=off: no limit, the cgroup is not read", map[string]string{"GOMEMLIMIT": "off"}, 0, 1000 << 20, defaultGCPercent, none},
		{"GOGC and a cgroup limit: GOGC untouched, soft limit set", map[string]string{"GOGC": "30"}, 0, 1000 << 20, 100, 900 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(none)
			if tc.runtime > 0 {
				debug.SetMemoryLimit(tc.runtime)
			}
			tuneGC(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok },
				func() (int64, bool) { return tc.cgroup, tc.cgroup > 0 })
			if got := debug.SetGCPercent(100); got != tc.wantGC {
				t.Errorf("GC percent %d, want %d", got, tc.wantGC)
			}
			if got := debug.SetMemoryLimit(none); got != tc.wantLimit {
				t.Errorf("memory limit %d, want %d", got, tc.wantLimit)
			}
		})
	}
}

func TestParseMemoryLimit(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"max\n", 0, false},
		{"9223372036854771712\n", 0, false}, // cgroup v1: no limit
		{"268435456\n", 268435456, true},
		{"0", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		got, ok := parseMemoryLimit(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
