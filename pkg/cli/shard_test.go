package cli

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Bad shard flags are usage errors that name the flags; nothing starts
// (no rules file is read: rules.yaml does not exist here).
func TestShardFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--total-shards", "0"}, "error: --total-shards must be at least 1, got 0\n"},
		{[]string{"--total-shards", "-2"}, "error: --total-shards must be at least 1, got -2\n"},
		{[]string{"--shard", "-1", "--total-shards", "3"}, "error: --shard must not be negative, got -1\n"},
		{[]string{"--shard", "3", "--total-shards", "3"}, "error: --shard must be less than --total-shards (3), got 3\n"},
		{[]string{"--shard", "1"}, "error: --shard must be less than --total-shards (1), got 1\n"},
		{[]string{"--shard", "0", "--total-shards", "2", "--leader-elect"}, "error: --leader-elect cannot be used with --total-shards: every shard writes its own objects\n"},
		{[]string{"--leader-elect=true", "--total-shards", "2", "--shard", "1"}, "error: --leader-elect cannot be used with --total-shards: every shard writes its own objects\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := invoke("kube-annotator", append([]string{"run", "--rules", t.TempDir() + "/none.yaml"}, tc.args...)...)
			want := tc.want + "See 'kube-annotator run --help'.\n"
			if code != 2 || stderr != want || stdout != "" {
				t.Errorf("run %q: exit %d, stdout %q, stderr %q; want exit 2 and stderr %q", tc.args, code, stdout, stderr, want)
			}
		})
	}
}

// Sharding turns leader election off unless it was asked for, also where
// it is on by default (in a cluster).
func TestShardFlagsLeaderElection(t *testing.T) {
	tests := []struct {
		name       string
		inCluster  bool
		args       []string
		wantLeader bool
		wantErr    bool
	}{
		{"in a cluster, not sharded: default on", true, nil, true, false},
		{"in a cluster, sharded: default off", true, []string{"--total-shards=3", "--shard=2"}, false, false},
		{"sharded, --leader-elect=false: off", true, []string{"--total-shards=3", "--leader-elect=false"}, false, false},
		{"sharded, --leader-elect=true: error", false, []string{"--total-shards=3", "--leader-elect=true"}, true, true},
		{"one shard, --leader-elect: on", false, []string{"--total-shards=1", "--leader-elect"}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.inCluster {
				t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
			} else {
				t.Setenv("KUBERNETES_SERVICE_HOST", "")
			}
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			leader, sf := addLeaderFlags(fs), addShardFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := sf.validate(fs.Changed, leader)
			if (err != nil) != tc.wantErr || leader.enabled != tc.wantLeader {
				t.Errorf("error %v, leader election %v; want error %v, leader election %v", err, leader.enabled, tc.wantErr, tc.wantLeader)
			}
		})
	}
}
