package cli

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/shard"
)

// shardFlags split the objects among replicas, as kube-state-metrics does:
// replica --shard of --total-shards owns the objects whose UID hashes into
// its part of the hash space.
type shardFlags struct {
	shard, total int
}

func addShardFlags(fs *pflag.FlagSet) *shardFlags {
	f := &shardFlags{}
	fs.IntVar(&f.shard, "shard", 0, "Which shard of --total-shards this replica is, from 0: it caches and annotates only the objects whose UID hashes into its part")
	fs.IntVar(&f.total, "total-shards", 1, "Number of replicas the objects are split among, each run with its own --shard (1: no sharding). Turns the default --leader-elect off")
	return f
}

// enabled reports whether the objects are split among replicas.
func (f *shardFlags) enabled() bool { return f.total > 1 }

// validate checks the flags, and turns leader election off when sharding
// unless it was asked for: every shard writes, none stands by. changed
// reports whether a flag was set on the command line.
func (f *shardFlags) validate(changed func(string) bool, leader *leaderFlags) error {
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

// shardListWatch returns what limits the informers to this replica's
// shard, asking client whether the API server applies shard selectors and
// reporting to reg: nothing when not sharding.
func (f *shardFlags) shardListWatch(logger klog.Logger, client dynamic.Interface, reg prometheus.Registerer) func(schema.GroupVersionResource, string, *cache.ListWatch) *cache.ListWatch {
	if !f.enabled() {
		return nil
	}
	rs := shard.NewRanges(shard.Static(f.shard, f.total))
	logger.Info("Sharding", "shard", f.shard, "totalShards", f.total, "ranges", rs.String())
	return shard.New(logger, client, rs, f.total, shard.NewMetrics(reg)).ListWatch
}

// cachedObjectsGauge reports the objects in c's caches.
func cachedObjectsGauge(c *controller.Controller) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "kube_annotator", Name: "cached_objects",
		Help: "Objects in the informers' caches of the ruled resources (with sharding, this replica's share).",
	}, func() float64 { return float64(c.CachedObjects()) })
}
