package cli

import (
	"testing"
	"time"

	"github.com/kube-annotator/kube-annotator/pkg/app"
)

// validConfig is a Config that validateConfig accepts: run's defaults.
func validConfig() app.Config {
	return app.Config{
		Workers: 8,
		Record:  app.RecordConfig{FieldManager: "kube-annotator"},
		Leader: app.LeaderConfig{Enabled: true, Name: "kube-annotator",
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second},
		Shard: app.ShardConfig{Total: 1, LeaseDuration: 15 * time.Second, RenewPeriod: 2 * time.Second},
	}
}

// validateConfig names the flag of the first value that cannot be used,
// and changes nothing. A bad --exclude-namespaces glob is a connection
// flag's error (TestRunFlagValidation).
func TestValidateConfig(t *testing.T) {
	tests := []struct {
		name   string
		change func(*app.Config)
		want   string // "" when valid
	}{
		{"defaults", func(*app.Config) {}, ""},
		{"no workers", func(c *app.Config) { c.Workers = 0 }, "--workers must be at least 1, got 0"},
		{"sharded and leading", func(c *app.Config) { c.Shard.Total, c.Shard.Shard = 2, 1 },
			"--leader-elect cannot be used with --total-shards: every shard writes its own objects"},
		{"sharded, not leading", func(c *app.Config) { c.Shard.Total, c.Leader.Enabled = 2, false }, ""},
		{"group and leading", func(c *app.Config) { c.Shard.Group = "g" },
			"--leader-elect cannot be used with --shard-group: every member writes its own objects"},
		{"lease shorter than the renew deadline", func(c *app.Config) { c.Leader.LeaseDuration = 10 * time.Second },
			"--leader-election-lease-duration (10s) must be longer than --leader-election-renew-deadline (10s)"},
		{"renew deadline within the retry period's jitter", func(c *app.Config) { c.Leader.RenewDeadline = 2 * time.Second },
			"--leader-election-renew-deadline (2s) must be longer than 1.2 times --leader-election-retry-period (2s)"},
		{"leader timings unused without leader election", func(c *app.Config) { c.Leader.Enabled, c.Leader.RetryPeriod = false, 0 }, ""},
		{"no lease name", func(c *app.Config) { c.Leader.Name = "" }, "--leader-election-id must not be empty"},
		{"bad record namespace", func(c *app.Config) { c.Record.Namespace = "A_b" }, `--record-namespace: "A_b" is not a namespace name: `},
		{"admission policies need a plain manager", func(c *app.Config) { c.AdmissionPolicies, c.Record.FieldManager = true, "team.a" },
			`--field-manager: field manager "team.a" cannot name admission policies: `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.change(&c)
			before := c
			err := validateConfig(&c)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("validateConfig() = %v, want nil", err)
			case tc.want != "" && (err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want):
				t.Errorf("validateConfig() = %v, want an error starting %q", err, tc.want)
			}
			if c.Leader != before.Leader || c.Shard != before.Shard || c.Record != before.Record {
				t.Errorf("validateConfig changed the Config: %+v, was %+v", c, before)
			}
		})
	}
}
