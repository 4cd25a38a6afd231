package app

import "testing"

func TestReleaser(t *testing.T) {
	type step struct {
		syncs  uint64 // since the start
		queued int
		want   bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a first convergence, then quiet", []step{{5000, 90000, false}, {60000, 40000, false}, {100000, 0, false}, {100010, 3, true}, {100020, 0, false}}},
		{"quiet, with the queue still full", []step{{30000, 50000, false}, {30000, 5000, false}, {30050, 0, true}}},
		{"a burst too small to free anything", []step{{500, 0, false}, {500, 0, false}}},
		{"churn that never stops is no burst", []step{{100, 0, false}, {200, 0, false}, {300, 0, false}, {400, 0, false}}},
		{"two bursts, each freed at its end", []step{{20000, 0, false}, {20000, 0, true}, {21500, 500, false}, {21500, 0, true}}},
		{"busy steps interrupted by a quiet one count apart", []step{{800, 0, false}, {800, 0, false}, {1600, 0, false}, {1600, 0, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r releaser
			for i, s := range tc.steps {
				if got := r.step(s.syncs, s.queued); got != s.want {
					t.Errorf("step %d (%d syncs, %d queued) = %v, want %v", i, s.syncs, s.queued, got, s.want)
				}
			}
		})
	}
}
