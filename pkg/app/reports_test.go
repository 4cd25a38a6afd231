package app

import "testing"

// Each static shard writes reports of its own; one replica, or one of
// replicas that elect a leader, writes those named kube-annotator.
func TestReportName(t *testing.T) {
	for _, tc := range []struct {
		shard ShardConfig
		want  string
	}{
		{ShardConfig{Total: 1}, "kube-annotator"},
		{ShardConfig{Shard: 0, Total: 3}, "kube-annotator-shard-0"},
		{ShardConfig{Shard: 2, Total: 3}, "kube-annotator-shard-2"},
	} {
		if got := (Config{Shard: tc.shard}).reportName(); got != tc.want {
			t.Errorf("shard %d of %d: report name %q, want %q", tc.shard.Shard, tc.shard.Total, got, tc.want)
		}
	}
}
