package app

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/shard"
)

// shardListWatch limits a ruled resource's informer to this replica's
// share of the objects (controller.Options.Shard).
type shardListWatch = func(schema.GroupVersionResource, string, *cache.ListWatch) *cache.ListWatch

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

// groupSharding is a member of a shard group.
type groupSharding struct{ *shard.Dynamic }

func (g groupSharding) join(ctx context.Context) error { return g.Join(ctx) }
func (g groupSharding) run(ctx context.Context, c *controller.Controller) error {
	return g.Run(ctx, c.HasSynced, c.Reshard)
}
func (g groupSharding) ready() error { return g.Ready() }

// buildSharding returns what limits the informers to this replica's shard
// (nil when not sharding), asking client whether the API server applies
// shard selectors and reporting to reg, and what keeps the shard current.
// A group member keeps its Lease, through cs, in leaseNamespace.
func buildSharding(logger klog.Logger, cfg ShardConfig, cs kubernetes.Interface, client dynamic.Interface, leaseNamespace string, reg prometheus.Registerer) (shardListWatch, sharding, error) {
	switch {
	case cfg.Group != "":
		return buildGroup(logger, cfg, cs, client, leaseNamespace, reg)
	case !cfg.Enabled():
		return nil, fixedSharding{}, nil
	}
	rs := shard.NewRanges(shard.Static(cfg.Shard, cfg.Total))
	logger.Info("Sharding", "shard", cfg.Shard, "totalShards", cfg.Total, "ranges", rs.String())
	return shard.New(logger, client, rs, cfg.Total, shard.NewMetrics(reg)).ListWatch, fixedSharding{}, nil
}

// buildGroup builds a member of the shard group, with its Lease in ns.
func buildGroup(logger klog.Logger, cfg ShardConfig, cs kubernetes.Interface, client dynamic.Interface, ns string, reg prometheus.Registerer) (shardListWatch, sharding, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, nil, fmt.Errorf("shard group member identity: %w", err)
	}
	suffix := utilrand.String(10)
	gc := shard.GroupConfig{
		Namespace: ns, Name: cfg.Group, ID: strings.ToLower(host) + "_" + suffix, LeaseName: cfg.Group + "-" + suffix,
		LeaseDuration: cfg.LeaseDuration, RenewPeriod: cfg.RenewPeriod,
	}
	logger = logger.WithValues("shardGroup", cfg.Group, "identity", gc.ID)
	logger.Info("Sharding dynamically", "lease", ns+"/"+gc.LeaseName)
	sh := shard.New(logger, client, nil, 0, shard.NewMetrics(reg))
	return sh.ListWatch, groupSharding{shard.NewDynamic(sh, shard.NewGroup(cs, gc), cfg.RenewPeriod)}, nil
}

// cachedObjectsGauge reports the objects in c's caches.
func cachedObjectsGauge(c *controller.Controller) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "kube_annotator", Name: "cached_objects",
		Help: "Objects in the informers' caches of the ruled resources (with sharding, this replica's share).",
	}, func() float64 { return float64(c.CachedObjects()) })
}
