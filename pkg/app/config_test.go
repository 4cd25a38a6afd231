package app

import (
	"testing"
	"time"
)

// valid is a Config that Validate accepts: run's defaults.
func valid() Config {
	return Config{
		Workers: 8,
		Record:  RecordConfig{FieldManager: "kube-annotator"},
		Leader: LeaderConfig{Enabled: true, Name: "kube-annotator",
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second},
		Shard: ShardConfig{Total: 1, LeaseDuration: 15 * time.Second, RenewPeriod: 2 * time.Second},
	}
}

// Validate names the flag of the first value that cannot be used, and
// changes nothing.
func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string // "" when valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"no workers", func(c *Config) { c.Workers = 0 }, "--workers must be at least 1, got 0"},
		{"sharded and leading", func(c *Config) { c.Shard.Total, c.Shard.Shard = 2, 1 },
			"--leader-elect cannot be used with --total-shards: every shard writes its own objects"},
		{"sharded, not leading", func(c *Config) { c.Shard.Total, c.Leader.Enabled = 2, false }, ""},
		{"group and leading", func(c *Config) { c.Shard.Group = "g" },
			"--leader-elect cannot be used with --shard-group: every member writes its own objects"},
		{"lease shorter than the renew deadline", func(c *Config) { c.Leader.LeaseDuration = 10 * time.Second },
			"--leader-election-lease-duration (10s) must be longer than --leader-election-renew-deadline (10s)"},
		{"renew deadline within the retry period's jitter", func(c *Config) { c.Leader.RenewDeadline = 2 * time.Second },
			"--leader-election-renew-deadline (2s) must be longer than 1.2 times --leader-election-retry-period (2s)"},
		{"leader timings unused without leader election", func(c *Config) { c.Leader.Enabled, c.Leader.RetryPeriod = false, 0 }, ""},
		{"no lease name", func(c *Config) { c.Leader.Name = "" }, "--leader-election-id must not be empty"},
		{"bad record namespace", func(c *Config) { c.Record.Namespace = "A_b" }, `--record-namespace: "A_b" is not a namespace name: `},
		{"bad glob", func(c *Config) { c.ExcludeNamespaces = []string{"["} }, `--exclude-namespaces: invalid namespace glob "[": `},
		{"admission policies need a plain manager", func(c *Config) { c.AdmissionPolicies, c.Record.FieldManager = true, "team.a" },
			`--field-manager: field manager "team.a" cannot name admission policies: `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.change(&c)
			before := c
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want):
				t.Errorf("Validate() = %v, want an error starting %q", err, tc.want)
			}
			if c.Leader != before.Leader || c.Shard != before.Shard || c.Record != before.Record {
				t.Errorf("Validate changed the Config: %+v, was %+v", c, before)
			}
		})
	}
}
