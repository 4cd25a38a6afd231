package app

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	tests := []struct {
		name string
		env  map[string]string
		want int
	}{
		{"GOGC unset: the controller's default", nil, defaultGCPercent},
		{"GOGC set: the runtime's, untouched", map[string]string{"GOGC": "200"}, 100},
		{"GOGC set empty: untouched too", map[string]string{"GOGC": ""}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			tuneGC(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if got := debug.SetGCPercent(100); got != tc.want {
				t.Errorf("GC percent %d, want %d", got, tc.want)
			}
		})
	}
}
