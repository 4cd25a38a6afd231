package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/shard"
)

// shardFlags split the objects among replicas. Statically, as
// kube-state-metrics does: replica --shard of --total-shards owns the
// objects whose UID hashes into its part of the hash space. Or
// dynamically: the replicas of a --shard-group find each other through
// Leases and share the hash space among those alive.
type shardFlags struct {
	shard, total  int
	group         string
	leaseDuration time.Duration
	renewPeriod   time.Duration
}

func addShardFlags(fs *pflag.FlagSet) *shardFlags {
	f := &shardFlags{}
	fs.IntVar(&f.shard, "shard", 0, "Which shard of --total-shards this replica is, from 0: it caches and annotates only the objects whose UID hashes into its part")
	fs.IntVar(&f.total, "total-shards", 1, "Number of replicas the objects are split among, each run with its own --shard (1: no sharding). Turns the default --leader-elect off")
	fs.StringVar(&f.group, "shard-group", "", "Split the objects among the live replicas run with this group name, which find each other through Leases in --leader-election-namespace and hand objects over as replicas come and go (instead of --shard and --total-shards). Turns the default --leader-elect off")
	fs.DurationVar(&f.leaseDuration, "shard-lease-duration", 15*time.Second, "With --shard-group: how long a replica counts as a member after it last renewed its Lease; the objects of a replica that died move to the others this long after")
	fs.DurationVar(&f.renewPeriod, "shard-renew-period", 2*time.Second, "With --shard-group: how often a replica renews its Lease and checks the others'")
	return f
}

// enabled reports whether the objects are split among replicas.
func (f *shardFlags) enabled() bool { return f.total > 1 || f.group != "" }

// validate checks the flags, and turns leader election off when sharding
// unless it was asked for: every shard writes, none stands by. changed
// reports whether a flag was set on the command line.
func (f *shardFlags) validate(changed func(string) bool, leader *leaderFlags) error {
	if f.group != "" {
		return f.validateGroup(changed, leader)
	}
	switch {
	case f.total < 1:
		return fmt.Errorf("--total-shards must be at least 1, got %d", f.total)
	case f.shard < 0:
		return fmt.Errorf("--shard must not be negative, got %d", f.shard)
	case f.shard >= f.total:
		return fmt.Errorf("--shard must be less than --total-shards (%d), got %d", f.total, f.shard)
	case !f.enabled():
		return nil
	case changed("leader-elect") && leader.enabled:
		return fmt.Errorf("--leader-elect cannot be used with --total-shards: every shard writes its own objects")
	}
	leader.enabled = false
	return nil
}

// validateGroup checks the flags of dynamic sharding.
func (f *shardFlags) validateGroup(changed func(string) bool, leader *leaderFlags) error {
	switch {
	case changed("shard") || changed("total-shards"):
		return fmt.Errorf("--shard-group cannot be used with --shard or --total-shards: the group shares the objects among its live replicas")
	case len(validation.IsDNS1123Label(f.group)) > 0 || len(f.group) > 40:
		return fmt.Errorf("--shard-group must be at most 40 lower-case letters, digits and '-', starting and ending with a letter or digit, got %q", f.group)
	case f.renewPeriod <= 0:
		return fmt.Errorf("--shard-renew-period must be positive, got %v", f.renewPeriod)
	case f.leaseDuration <= f.renewPeriod:
		return fmt.Errorf("--shard-lease-duration (%v) must be longer than --shard-renew-period (%v)", f.leaseDuration, f.renewPeriod)
	case changed("leader-elect") && leader.enabled:
		return fmt.Errorf("--leader-elect cannot be used with --shard-group: every member writes its own objects")
	}
	leader.enabled = false
	return nil
}

// sharding is this replica's part in sharding beyond its informers'
// selector: joining the group before the informers start, keeping the
// ranges current while they run, and whether its share has synced.
type sharding interface {
	join(ctx context.Context) error
	run(ctx context.Context, c *controller.Controller) error
	ready() error
}

// fixedSharding has nothing to do: no sharding, or static shards.
type fixedSharding struct{}

func (fixedSharding) join(context.Context) error                        { return nil }
func (fixedSharding) run(context.Context, *controller.Controller) error { return nil }
func (fixedSharding) ready() error                                      { return nil }

// groupSharding is a member of a --shard-group.
type groupSharding struct{ *shard.Dynamic }

func (g groupSharding) join(ctx context.Context) error { return g.Join(ctx) }
func (g groupSharding) run(ctx context.Context, c *controller.Controller) error {
	return g.Run(ctx, c.HasSynced, c.Reshard)
}
func (g groupSharding) ready() error { return g.Ready() }

// build returns what limits the informers to this replica's shard (nil
// when not sharding), asking client whether the API server applies shard
// selectors and reporting to reg, and what keeps the shard current.
func (f *shardFlags) build(logger klog.Logger, cfg *rest.Config, client dynamic.Interface, leader *leaderFlags, reg prometheus.Registerer) (func(schema.GroupVersionResource, string, *cache.ListWatch) *cache.ListWatch, sharding, error) {
	switch {
	case f.group != "":
		return f.buildGroup(logger, cfg, client, leader.leaseNamespace(), reg)
	case !f.enabled():
		return nil, fixedSharding{}, nil
	}
	rs := shard.NewRanges(shard.Static(f.shard, f.total))
	logger.Info("Sharding", "shard", f.shard, "totalShards", f.total, "ranges", rs.String())
	return shard.New(logger, client, rs, f.total, shard.NewMetrics(reg)).ListWatch, fixedSharding{}, nil
}

// buildGroup builds a member of the --shard-group, with its Lease in ns.
func (f *shardFlags) buildGroup(logger klog.Logger, cfg *rest.Config, client dynamic.Interface, ns string, reg prometheus.Registerer) (func(schema.GroupVersionResource, string, *cache.ListWatch) *cache.ListWatch, sharding, error) {
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, nil, err
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, nil, fmt.Errorf("shard group member identity: %w", err)
	}
	suffix := utilrand.String(10)
	gc := shard.GroupConfig{
		Namespace: ns, Name: f.group, ID: strings.ToLower(host) + "_" + suffix, LeaseName: f.group + "-" + suffix,
		LeaseDuration: f.leaseDuration, RenewPeriod: f.renewPeriod,
	}
	logger = logger.WithValues("shardGroup", f.group, "identity", gc.ID)
	logger.Info("Sharding dynamically", "lease", ns+"/"+gc.LeaseName)
	sh := shard.New(logger, client, nil, 0, shard.NewMetrics(reg))
	return sh.ListWatch, groupSharding{shard.NewDynamic(sh, shard.NewGroup(cs, gc), f.renewPeriod)}, nil
}

// cachedObjectsGauge reports the objects in c's caches.
func cachedObjectsGauge(c *controller.Controller) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "kube_annotator", Name: "cached_objects",
		Help: "Objects in the informers' caches of the ruled resources (with sharding, this replica's share).",
	}, func() float64 { return float64(c.CachedObjects()) })
}
