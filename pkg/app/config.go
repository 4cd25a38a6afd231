package app

import (
	"fmt"
	"time"

	"k8s.io/client-go/rest"
)

// Config is everything the process is built from. Its fields are run's
// flags, with their defaults resolved, completed and validated by the
// command line before Run receives them.
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
	// Reports configures the OpenReports reports written.
	Reports ReportsConfig
	// RESTConfig builds the client configuration. It is called once,
	// after the rules file has loaded, so that a bad file is reported
	// before anything talks to the cluster.
	RESTConfig func() (*rest.Config, error)
	// Names are how the user names the settings the process's errors and
	// notes point to: the command line's flags.
	Names Names
}

// Names are the names of settings as the user writes them, e.g.
// "--max-changes", for the errors and notes that point to them. The
// process knows no flag: the command line fills them in. A name left ""
// is described instead.
type Names struct {
	// MaxChanges names Config.MaxChanges.
	MaxChanges string
	// FieldManager and RecordNamespace name Config.Record's fields.
	FieldManager, RecordNamespace string
}

// recordHint says where the record's access comes from and what names
// the record, for errors about it.
func (n Names) recordHint() string {
	names := "the field manager and the record's namespace name it"
	if n.FieldManager != "" && n.RecordNamespace != "" {
		names = n.FieldManager + " and " + n.RecordNamespace + " name it"
	}
	return "kube-annotator rbac grants access to the record; " + names
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

// ReportsConfig configures the reports of the objects whose keys are not
// as the rules want (pkg/reports).
type ReportsConfig struct {
	// Enabled writes them (--reports); when off, those written before
	// are deleted at start.
	Enabled bool
	// Interval is how often, at most, they are written
	// (--reports-interval).
	Interval time.Duration
	// MaxResults is the most results one holds (--reports-max-results).
	MaxResults int
}

// reportName is the name of this replica's reports: one per static
// shard, as each writes the results of its own objects alone.
func (c Config) reportName() string {
	if c.Shard.Total > 1 {
		return fmt.Sprintf("kube-annotator-shard-%d", c.Shard.Shard)
	}
	return "kube-annotator"
}
