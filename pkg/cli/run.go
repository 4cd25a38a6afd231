package cli

import (
	"cmp"
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/app"
)

// runOptions are run's flags: the process's Config, completed and
// validated once, and the connection flags that build its client
// configuration.
type runOptions struct {
	commonFlags
	cfg app.Config
	// shardsGiven says whether --shard or --total-shards was given, which
	// --shard-group excludes.
	shardsGiven bool
}

func (e *env) newRunCommand() *cobra.Command {
	o := &runOptions{}
	c := &cobra.Command{
		Use:   "run",
		Short: "Run the controller: keep every ruled object annotated",
		Long: "Run the controller: watch every resource the rules name and keep each object annotated as they say.\n" +
			"The rules file is reloaded when it changes or on SIGHUP; an invalid file keeps the previous rules in force.\n" +
			"Keys set on a resource that no rule names any more are deleted: the resources written to are recorded in a ConfigMap.",
		Args: noArgs,
	}
	o.addFlags(c)
	c.RunE = func(c *cobra.Command, args []string) error {
		if err := completeAndValidate(o, c, args); err != nil {
			return err
		}
		// A controller logs through klog, as -v says, until it is stopped.
		return o.run(klog.NewContext(c.Context(), klog.Background().WithName("kube-annotator")))
	}
	return c
}

// addFlags adds run's flags to cmd.
func (o *runOptions) addFlags(cmd *cobra.Command) {
	c := &o.cfg
	fs := o.addRules(cmd)
	fs.IntVar(&c.Workers, "workers", 8, "Number of objects synced in parallel")
	fs.DurationVar(&c.ResyncPeriod, "resync-period", 0, "How often every cached object is synced again although nothing changed, e.g. 10h (0: never; events alone keep objects converged)")
	fs.BoolVar(&c.WatchRules, "watch-rules", true, "Reload the rules file when it changes (SIGHUP always reloads it)")
	fs.BoolVar(&c.Events, "events", false, "Record a Normal event on every object changed and a Warning event when a change is rejected")
	fs.StringVar(&c.MetricsAddr, "metrics-bind-address", "", "Address to serve Prometheus metrics on at /metrics, e.g. :8080 (default off)")
	fs.StringVar(&c.ProbeAddr, "health-probe-bind-address", "", "Address to serve /healthz and /readyz on, e.g. :8081 (default off)")
	fs.IntVar(&c.MaxChanges, "max-changes", 0, "Hold a reload of the rules file that would change more objects than this (as the caches count them) until SIGHUP confirms it with the file unchanged (0: never hold)")
	fs.BoolVar(&c.AdmissionPolicies, "admission-policies", false, "Also keep MutatingAdmissionPolicies in the cluster that apply the rules as objects are created or updated (see 'admission'); they are created, updated and deleted with the rules")
	addRecordVars(fs, &c.Record)
	addLeaderFlags(fs, &c.Leader)
	addShardFlags(fs, &c.Shard)
	fs.BoolVar(&c.Reports.Enabled, "reports", false, "Write an OpenReports Report per namespace, and a ClusterReport, of the keys not as the rules want (openreports.io/v1alpha1; docs/reports.md). Off, those written before are deleted")
	fs.DurationVar(&c.Reports.Interval, "reports-interval", 30*time.Second, "With --reports: how often, at most, a report that changed is written")
	fs.IntVar(&c.Reports.MaxResults, "reports-max-results", 1000, "With --reports: the most results one report holds; its summary counts those left out")
	o.addCluster(cmd, "0", clusterScope{exclude: true,
		allNamespaces: "Watch every namespace: what run does without -n, whatever the kubeconfig context's namespace"})
}

// complete resolves the defaults that depend on other flags or on where
// the process runs, and fills the Config from the connection flags.
func (o *runOptions) complete(cmd *cobra.Command, _ []string) error {
	c, changed := &o.cfg, cmd.Flags().Changed
	o.shardsGiven = changed("shard") || changed("total-shards")
	// Leader election is on by default in a cluster, unless sharded: every
	// shard writes, none stands by.
	if !changed("leader-elect") {
		c.Leader.Enabled = inCluster() && !c.Shard.Enabled()
	}
	if c.Leader.Namespace == "" {
		c.Leader.Namespace = podNamespace()
	}
	c.RulesPath = o.rulesPath
	c.Namespace, c.ExcludeNamespaces, c.RESTConfig = o.cluster.namespace(), o.cluster.exclude, o.cluster.reachedRESTConfig
	c.Record.Namespace = recordNamespace(c.Record.Namespace, c.Namespace)
	c.Names = runSettingNames
	return nil
}

// runSettingNames are the flags by which the process's errors and notes
// point to its settings.
var runSettingNames = app.Names{MaxChanges: "--max-changes", FieldManager: "--field-manager", RecordNamespace: "--record-namespace"}

// validate reports, naming the flag, the first value that cannot be used:
// the one place run's configuration is checked.
func (o *runOptions) validate() error {
	switch {
	case o.cfg.Shard.Group != "" && o.shardsGiven:
		return errors.New("--shard-group cannot be used with --shard or --total-shards: the group shares the objects among its live replicas")
	case o.cfg.Reports.Enabled && o.cfg.Shard.Group != "":
		return errors.New("--reports cannot be used with --shard-group: each shard writes reports of its own, and a group's members come and go")
	case o.cfg.Reports.Enabled && (o.cfg.Reports.Interval < time.Second || o.cfg.Reports.MaxResults < 1):
		return errors.New("--reports-interval must be at least 1s, and --reports-max-results at least 1")
	}
	return cmp.Or(o.cluster.validate(), validateConfig(&o.cfg), defaultRulesExist(o.fs))
}

// run runs the controller until ctx ends.
func (o *runOptions) run(ctx context.Context) error { return app.Run(ctx, o.cfg) }

// serviceAccountNamespace is where a Pod finds its own namespace.
var serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// inCluster reports whether the process runs in a Pod.
func inCluster() bool { return os.Getenv("KUBERNETES_SERVICE_HOST") != "" }

// podNamespace is the namespace of the Pod the process runs in, or
// "default" outside a cluster.
func podNamespace() string {
	if ns, ok := ownNamespace(); ok {
		return ns
	}
	return "default"
}

// ownNamespace is the namespace of the Pod the process runs in; ok is
// false outside a Pod.
func ownNamespace() (ns string, ok bool) {
	data, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return "", false
	}
	ns = strings.TrimSpace(string(data))
	return ns, ns != ""
}

// defaultLeaseName is the Lease of leader election that run takes and rbac
// grants by default.
const defaultLeaseName = "kube-annotator"

// addLeaderFlags adds the flags of leader election on a Lease, stored in c.
func addLeaderFlags(fs *pflag.FlagSet, c *app.LeaderConfig) {
	fs.BoolVar(&c.Enabled, "leader-elect", inCluster(), "Elect a leader on a Lease so that only one replica writes (default on in a cluster, off elsewhere)")
	fs.StringVar(&c.Namespace, "leader-election-namespace", "", "Namespace of the Lease (default: the Pod's namespace in a cluster, else \"default\")")
	fs.StringVar(&c.Name, "leader-election-id", defaultLeaseName, "Name of the Lease")
	fs.DurationVar(&c.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a lease is valid without renewal; a new leader takes over at most this long after the old one vanished")
	fs.DurationVar(&c.RenewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew before it gives up leading")
	fs.DurationVar(&c.RetryPeriod, "leader-election-retry-period", 2*time.Second, "How often candidates try to acquire or renew the lease")
}

// addShardFlags adds the flags that split the objects among replicas,
// stored in c.
func addShardFlags(fs *pflag.FlagSet, c *app.ShardConfig) {
	fs.IntVar(&c.Shard, "shard", 0, "Which shard of --total-shards this replica is, from 0: it caches and annotates only the objects whose UID hashes into its part")
	fs.IntVar(&c.Total, "total-shards", 1, "Number of replicas the objects are split among, each run with its own --shard (1: no sharding). Turns the default --leader-elect off")
	fs.StringVar(&c.Group, "shard-group", "", "Split the objects among the live replicas run with this group name, which find each other through Leases in --leader-election-namespace and hand objects over as replicas come and go (instead of --shard and --total-shards). Turns the default --leader-elect off")
	fs.DurationVar(&c.LeaseDuration, "shard-lease-duration", 15*time.Second, "With --shard-group: how long a replica counts as a member after it last renewed its Lease; the objects of a replica that died move to the others this long after")
	fs.DurationVar(&c.RenewPeriod, "shard-renew-period", 2*time.Second, "With --shard-group: how often a replica renews its Lease and checks the others'")
}
