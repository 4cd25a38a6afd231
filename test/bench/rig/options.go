package rig

import (
	"slices"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/workload"
)

// Options are what the benchmark measures and how, as its command line
// (test/bench's flags) sets them.
type Options struct {
	Binary        string
	Objects       int
	Rounds        int
	Workers       int
	Steady        time.Duration
	Latency       int
	MemoryObjects []int
	MemoryWindow  time.Duration
	Timeout       time.Duration
	CRCacheReads  bool
	Realistic     bool
	// ShapeNames, when not empty, are the shapes measured, overriding
	// Realistic.
	ShapeNames []string
	GoMemLimit int64
	// Shards, when not 0, is the number of replicas the sharding phases
	// split the objects among.
	Shards int
	// Reshard says whether the sharding rounds also measure a group
	// growing and shrinking.
	Reshard bool
	// Setups, when not empty, are the ids of the sharding setups the
	// rounds measure.
	Setups []string
	// ProfileDir, when set, is where a CPU profile of kube-apiserver is
	// written for each run, over its first ProfileFor.
	ProfileDir string
	ProfileFor time.Duration
	// Variants are more kube-annotator runners; Runners, when not empty,
	// the runners the rounds run.
	Variants []Variant
	Runners  []string
	// Clients are the benchmark's own requests in flight while it seeds
	// and resets; EtcdQuota is etcd's --quota-backend-bytes.
	Clients   int
	EtcdQuota int64
	// Owners, when not 0, is the replicas of the Deployment that the
	// owners phase relabels, which it measures instead of the others;
	// OwnersCached the Deployments with no replicas it adds to measure
	// the memory per owner cached.
	Owners       int
	OwnersCached int
}

// Shapes are the shapes of objects the benchmark measures with.
func (o Options) Shapes() []workload.Shape {
	if len(o.ShapeNames) > 0 {
		var out []workload.Shape
		for _, s := range []workload.Shape{workload.Small, workload.Realistic} {
			if slices.Contains(o.ShapeNames, s.Name) {
				out = append(out, s)
			}
		}
		return out
	}
	if o.Realistic {
		return []workload.Shape{workload.Small, workload.Realistic}
	}
	return []workload.Shape{workload.Small}
}

// Measured reports whether the rounds run the runner named name: every
// runner unless --runners names some.
func (o Options) Measured(name string) bool {
	return len(o.Runners) == 0 || slices.Contains(o.Runners, name)
}

// APIServerFlags are the extra kube-apiserver flags of the benchmark's
// control plane: with --shards, the feature gate that lets the API server
// apply shard selectors, so that each replica receives only its share.
func (o Options) APIServerFlags() map[string]string {
	if o.Shards == 0 {
		return nil
	}
	return map[string]string{"feature-gates": "ShardedListAndWatch=true"}
}

// Variant is one more kube-annotator runner measured in each round beside
// the four: another build of it, or it with environment variables or
// flags of its own, so that a change is measured against the product in
// one run, under the same load.
type Variant struct {
	Name, Binary string
	Env, Args    []string
}
