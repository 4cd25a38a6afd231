package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	"github.com/kube-annotator/kube-annotator/pkg/app"
	"github.com/kube-annotator/kube-annotator/pkg/glob"
	"github.com/kube-annotator/kube-annotator/pkg/record"
)

// validateConfig reports, naming its flag, the first value of run's Config
// that cannot be used. It changes nothing: defaults are completed before.
// The connection flags, -n and --exclude-namespaces among them, are
// clusterFlags.validate's.
func validateConfig(c *app.Config) error {
	switch {
	case c.Workers < 1:
		return fmt.Errorf("--workers must be at least 1, got %d", c.Workers)
	case c.ResyncPeriod < 0:
		return fmt.Errorf("--resync-period must not be negative, got %v", c.ResyncPeriod)
	case c.MaxChanges < 0:
		return fmt.Errorf("--max-changes must not be negative, got %d (0 turns the guard off)", c.MaxChanges)
	}
	if err := validateShards(c.Shard, c.Leader.Enabled); err != nil {
		return err
	}
	if err := validateLeader(c.Leader); err != nil {
		return err
	}
	if err := validateRecord(c.Record); err != nil {
		return err
	}
	if c.AdmissionPolicies {
		if err := admission.ValidateFieldManager(c.Record.FieldManager); err != nil {
			return fmt.Errorf("--field-manager: %w", err)
		}
	}
	return nil
}

// validateRecord reports, naming the flag, a field manager or record
// namespace that cannot be used; an empty namespace is the default one.
func validateRecord(r app.RecordConfig) error {
	if err := record.ValidateFieldManager(r.FieldManager); err != nil {
		return fmt.Errorf("--field-manager: %w", err)
	}
	if r.Namespace != "" {
		if errs := validation.IsDNS1123Label(r.Namespace); len(errs) > 0 {
			return fmt.Errorf("--record-namespace: %q is not a namespace name: %s", r.Namespace, strings.Join(errs, "; "))
		}
	}
	return nil
}

// validateExcludeNamespaces reports, naming the flag, a namespace glob that
// is not a glob.
func validateExcludeNamespaces(globs []string) error {
	for _, g := range globs {
		if err := glob.Check(g); err != nil {
			return fmt.Errorf("--exclude-namespaces: invalid namespace glob %q: %w", g, err)
		}
	}
	return nil
}

// validateLeader checks what client-go's leader election would refuse when
// it starts, when leader election is on.
func validateLeader(l app.LeaderConfig) error {
	switch {
	case !l.Enabled:
		return nil
	case l.Name == "":
		return errors.New("--leader-election-id must not be empty")
	case l.RetryPeriod <= 0:
		return fmt.Errorf("--leader-election-retry-period must be positive, got %v", l.RetryPeriod)
	case l.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(l.RetryPeriod)):
		return fmt.Errorf("--leader-election-renew-deadline (%v) must be longer than %v times --leader-election-retry-period (%v)",
			l.RenewDeadline, leaderelection.JitterFactor, l.RetryPeriod)
	case l.LeaseDuration <= l.RenewDeadline:
		return fmt.Errorf("--leader-election-lease-duration (%v) must be longer than --leader-election-renew-deadline (%v)", l.LeaseDuration, l.RenewDeadline)
	}
	return nil
}

// validateShards checks the sharding values; leader says whether leader
// election is on, which sharding excludes: every shard writes, none
// stands by.
func validateShards(s app.ShardConfig, leader bool) error {
	if s.Group != "" {
		return validateShardGroup(s, leader)
	}
	switch {
	case s.Total < 1:
		return fmt.Errorf("--total-shards must be at least 1, got %d", s.Total)
	case s.Shard < 0:
		return fmt.Errorf("--shard must not be negative, got %d", s.Shard)
	case s.Shard >= s.Total:
		return fmt.Errorf("--shard must be less than --total-shards (%d), got %d", s.Total, s.Shard)
	case s.Enabled() && leader:
		return fmt.Errorf("--leader-elect cannot be used with --total-shards: every shard writes its own objects")
	}
	return nil
}

// validateShardGroup checks the values of dynamic sharding.
func validateShardGroup(s app.ShardConfig, leader bool) error {
	switch {
	case len(validation.IsDNS1123Label(s.Group)) > 0 || len(s.Group) > 40:
		return fmt.Errorf("--shard-group must be at most 40 lower-case letters, digits and '-', starting and ending with a letter or digit, got %q", s.Group)
	case s.RenewPeriod <= 0:
		return fmt.Errorf("--shard-renew-period must be positive, got %v", s.RenewPeriod)
	case s.LeaseDuration <= s.RenewPeriod:
		return fmt.Errorf("--shard-lease-duration (%v) must be longer than --shard-renew-period (%v)", s.LeaseDuration, s.RenewPeriod)
	case leader:
		return fmt.Errorf("--leader-elect cannot be used with --shard-group: every member writes its own objects")
	}
	return nil
}
