package app

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	"github.com/kube-annotator/kube-annotator/pkg/record"
)

// Config is everything the process is built from. Its fields are run's
// flags, with their defaults resolved; Validate's errors name the flags.
type Config struct {
	// RulesPath is the rules file (--rules).
	RulesPath string
	// Workers is the number of objects synced in parallel (--workers).
	Workers int
	// ResyncPeriod is how often every cached object is synced again
	// although nothing changed; 0 never (--resync-period).
	ResyncPeriod time.Duration
	// WatchRules reloads the rules file when it changes (--watch-rules).
	WatchRules bool
	// Events records an event on every object changed (--events).
	Events bool
	// MetricsAddr and ProbeAddr are where /metrics and the health probes
	// are served; "" for off (--metrics-bind-address,
	// --health-probe-bind-address).
	MetricsAddr, ProbeAddr string
	// MaxChanges holds a reload that would change more objects; 0 holds
	// none (--max-changes).
	MaxChanges int
	// AdmissionPolicies keeps MutatingAdmissionPolicies in sync with the
	// rules (--admission-policies).
	AdmissionPolicies bool
	// Namespace limits namespaced resources to one namespace; "" is all
	// (-n).
	Namespace string
	// ExcludeNamespaces are the namespace globs no rule applies in
	// (--exclude-namespaces).
	ExcludeNamespaces []string
	// Record names the field manager and its record.
	Record RecordConfig
	// Leader configures leader election.
	Leader LeaderConfig
	// Shard splits the objects among replicas.
	Shard ShardConfig
	// RESTConfig builds the client configuration. It is called once,
	// after the rules file has loaded, so that a bad file is reported
	// before anything talks to the cluster.
	RESTConfig func() (*rest.Config, error)
}

// RecordConfig names the field manager the process writes as and where
// its record of the resources written to is kept (package record).
type RecordConfig struct {
	// FieldManager is the field manager (--field-manager).
	FieldManager string
	// Namespace is the record's namespace (--record-namespace).
	Namespace string
}

// LeaderConfig configures leader election on a Lease.
type LeaderConfig struct {
	// Enabled elects a leader (--leader-elect).
	Enabled bool
	// Namespace and Name name the Lease (--leader-election-namespace,
	// --leader-election-id).
	Namespace, Name string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's
	// leader election timings (--leader-election-lease-duration,
	// --leader-election-renew-deadline, --leader-election-retry-period).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// ShardConfig splits the objects among replicas. Statically, as
// kube-state-metrics does: replica Shard of Total owns the objects whose
// UID hashes into its part of the hash space. Or dynamically: the replicas
// of a Group find each other through Leases and share the hash space among
// those alive.
type ShardConfig struct {
	// Shard and Total are --shard and --total-shards.
	Shard, Total int
	// Group is --shard-group; "" for static shards.
	Group string
	// LeaseDuration and RenewPeriod are the group's Lease timings
	// (--shard-lease-duration, --shard-renew-period).
	LeaseDuration, RenewPeriod time.Duration
}

// Enabled reports whether the objects are split among replicas.
func (s ShardConfig) Enabled() bool { return s.Total > 1 || s.Group != "" }

// Validate reports the first value that cannot be used, naming its flag.
// It has no side effects: defaults are resolved before.
func (c *Config) Validate() error {
	switch {
	case c.Workers < 1:
		return fmt.Errorf("--workers must be at least 1, got %d", c.Workers)
	case c.ResyncPeriod < 0:
		return fmt.Errorf("--resync-period must not be negative, got %v", c.ResyncPeriod)
	case c.MaxChanges < 0:
		return fmt.Errorf("--max-changes must not be negative, got %d (0 turns the guard off)", c.MaxChanges)
	}
	if err := c.Shard.validate(c.Leader.Enabled); err != nil {
		return err
	}
	if err := c.Leader.validate(); err != nil {
		return err
	}
	if err := c.Record.Validate(); err != nil {
		return err
	}
	if c.AdmissionPolicies {
		if err := admission.ValidateFieldManager(c.Record.FieldManager); err != nil {
			return fmt.Errorf("--field-manager: %w", err)
		}
	}
	return ValidateExcludeNamespaces(c.ExcludeNamespaces)
}

// Validate reports, naming the flag, a field manager or record namespace
// that cannot be used; an empty namespace is the default one.
func (r RecordConfig) Validate() error {
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

// ValidateExcludeNamespaces reports, naming the flag, a namespace glob that
// is not a glob.
func ValidateExcludeNamespaces(globs []string) error {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("--exclude-namespaces: invalid namespace glob %q: %w", g, err)
		}
	}
	return nil
}

// validate checks what client-go's leader election would refuse when it
// starts, when leader election is on.
func (l LeaderConfig) validate() error {
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

// validate checks the sharding values; leader says whether leader
// election is on, which sharding excludes: every shard writes, none
// stands by.
func (s ShardConfig) validate(leader bool) error {
	if s.Group != "" {
		return s.validateGroup(leader)
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

// validateGroup checks the values of dynamic sharding.
func (s ShardConfig) validateGroup(leader bool) error {
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
