package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
		{[]string{"--shard-group", "a", "--total-shards", "3"}, "error: --shard-group cannot be used with --shard or --total-shards: the group shares the objects among its live replicas\n"},
		{[]string{"--shard-group", "a", "--shard", "0"}, "error: --shard-group cannot be used with --shard or --total-shards: the group shares the objects among its live replicas\n"},
		{[]string{"--shard-group", "a", "--leader-elect=true"}, "error: --leader-elect cannot be used with --shard-group: every member writes its own objects\n"},
		{[]string{"--shard-group", "A_b"}, "error: --shard-group must be at most 40 lower-case letters, digits and '-', starting and ending with a letter or digit, got \"A_b\"\n"},
		{[]string{"--shard-group", "a", "--shard-renew-period", "0s"}, "error: --shard-renew-period must be positive, got 0s\n"},
		{[]string{"--shard-group", "a", "--reports"}, "error: --reports cannot be used with --shard-group: each shard writes reports of its own, and a group's members come and go\n"},
		{[]string{"--reports", "--reports-max-results", "0"}, "error: --reports-interval must be at least 1s, and --reports-max-results at least 1\n"},
		{[]string{"--shard-group", "a", "--shard-lease-duration", "2s"}, "error: --shard-lease-duration (2s) must be longer than --shard-renew-period (2s)\n"},
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

// Sharding turns the default leader election off, also where it is on by
// default (in a cluster); asking for both is an error.
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
		{"in a cluster, shard group: default off", true, []string{"--shard-group=annotators"}, false, false},
		{"shard group, --leader-elect=false: off", true, []string{"--shard-group=annotators", "--leader-elect=false"}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.inCluster {
				t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
			} else {
				t.Setenv("KUBERNETES_SERVICE_HOST", "")
			}
			c := &cobra.Command{Use: "run"}
			o := &runOptions{}
			o.addFlags(c)
			if err := c.Flags().Parse(append([]string{"--rules", "rules.yaml"}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			err := completeAndValidate(o, c, nil)
			if (err != nil) != tc.wantErr || o.cfg.Leader.Enabled != tc.wantLeader {
				t.Errorf("error %v, leader election %v; want error %v, leader election %v", err, o.cfg.Leader.Enabled, tc.wantErr, tc.wantLeader)
			}
		})
	}
}
