package sharding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// MaxShards bounds --shards: every replica is a process on this machine.
const MaxShards = 16

// shardSetup is how kube-annotator's replicas split the objects.
type shardSetup struct {
	// id names the setup in file and group names, name in tables.
	id, name string
	replicas int
	// group: the replicas form a shard group; otherwise, with more than
	// one replica, they are static shards.
	group bool
}

// setupsOf are what --shards compares: one replica, static shards and
// a shard group.
func setupsOf(o rig.Options) []shardSetup {
	all := []shardSetup{
		{id: "single", name: "1 replica", replicas: 1},
		{id: "static", name: fmt.Sprintf("%d static shards", o.Shards), replicas: o.Shards},
		{id: "group", name: fmt.Sprintf("group of %d", o.Shards), replicas: o.Shards, group: true},
	}
	if len(o.Setups) == 0 {
		return all
	}
	return slices.DeleteFunc(all, func(s shardSetup) bool { return !slices.Contains(o.Setups, s.id) })
}

// SetupIDs are the ids --setups accepts.
var SetupIDs = []string{"single", "static", "group"}

// args are the sharding flags of replica i; group names the shard group.
func (s shardSetup) args(i int, group string) []string {
	switch {
	case s.group:
		return []string{"--shard-group", group, "--leader-election-namespace", metav1.NamespaceDefault}
	case s.replicas > 1:
		return []string{"--shard", strconv.Itoa(i), "--total-shards", strconv.Itoa(s.replicas)}
	}
	return nil
}

// replica is one kube-annotator process, with its metrics and probes on
// loopback.
type replica struct {
	*child.Process
	metrics, readyz string // URLs
}

// startReplica starts kube-annotator with env added to its environment
// and extra flags, its metrics and probes on free loopback ports.
func startReplica(b *rig.Bench, ka *rig.Runner, tag string, env []string, extra ...string) (*replica, error) {
	addrs, err := child.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	args := append([]string{"--metrics-bind-address", addrs[0], "--health-probe-bind-address", addrs[1]}, extra...)
	c, err := b.Start(ka, tag, env, args...)
	if err != nil {
		return nil, err
	}
	return &replica{Process: c, metrics: "http://" + addrs[0] + "/metrics", readyz: "http://" + addrs[1] + "/readyz"}, nil
}

// metric is the sum of the samples of metric name whose labels include
// match, from the replica's metrics.
func (r *replica) metric(ctx context.Context, name string, match map[string]string) (float64, error) {
	body, err := child.Get(ctx, r.metrics)
	if err != nil {
		return 0, fmt.Errorf("%s (pid %d) metrics: %w", r.Name, r.PID(), err)
	}
	return promtext.MetricValue(body, name, match), nil
}

// replicas are the processes of one setup, the first started first.
type replicas []*replica

// startReplicas starts the replicas of s, their logs named after tag,
// with env added to their environment. A group is named after tag.
func startReplicas(b *rig.Bench, ka *rig.Runner, s shardSetup, tag string, env []string) (replicas, error) {
	var rs replicas
	for i := range s.replicas {
		r, err := startReplica(b, ka, fmt.Sprintf("%s-%d", tag, i), env, s.args(i, tag)...)
		if err != nil {
			return nil, errors.Join(err, rs.stop())
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// alive returns an error once any replica has exited.
func (rs replicas) alive() error {
	for _, r := range rs {
		if err := r.Alive(); err != nil {
			return err
		}
	}
	return nil
}

// stop stops every replica at once and returns every error.
func (rs replicas) stop() error {
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() { errs[i] = r.Stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// metric is each replica's metric, as replica.metric.
func (rs replicas) metric(ctx context.Context, name string, match map[string]string) ([]float64, error) {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		v, err := r.metric(ctx, name, match)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

// cached is each replica's cached objects: its share of the objects.
func (rs replicas) cached(ctx context.Context) ([]float64, error) {
	return rs.metric(ctx, "kube_annotator_cached_objects", nil)
}

// selectorModes are how many of the replicas' informers the API server
// applied the shard selector of, and the resources of the others: those
// whose replicas received every object and dropped the others' share.
func (rs replicas) selectorModes(ctx context.Context) (server float64, client []string, err error) {
	const mode = "kube_annotator_shard_informer_mode"
	modes, err := rs.metric(ctx, mode, map[string]string{"mode": "server"})
	if err != nil {
		return 0, nil, err
	}
	for _, r := range workload.Resources {
		gr := r.GVR.GroupResource().String()
		n, err := rs.metric(ctx, mode, map[string]string{"mode": "client", "resource": gr})
		if err != nil {
			return 0, nil, err
		}
		if table.Sum(n) > 0 {
			client = append(client, gr)
		}
	}
	return table.Sum(modes), client, nil
}

// cpu is each replica's CPU time so far, or in all once it has exited.
func (rs replicas) cpu() []float64 {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = r.CPU()
	}
	return vs
}

// rss is each replica's RSS now, in KiB.
func (rs replicas) rss() []int64 {
	vs := make([]int64, len(rs))
	for i, r := range rs {
		vs[i] = r.RSS()
	}
	return vs
}

// peakRSS is each replica's peak RSS in KiB, once it has exited.
func (rs replicas) peakRSS() []int64 {
	vs := make([]int64, len(rs))
	for i, r := range rs {
		vs[i] = r.PeakRSS()
	}
	return vs
}

// shardRun is one run of one setup.
type shardRun struct {
	setup           string
	replicas, round int
	objects         int
	first, converge time.Duration     // from the first start until the first, and every, object was annotated
	run             rig.RequestCounts // until settle after that
	cpu             []float64         // each replica's, until every object was annotated
	control         rig.CPUTimes      // the control plane's, over the same time
	cached          []float64         // each replica's cached objects then
	serverSelectors float64           // informers whose shard selector the API server applied
	clientSide      []string          // resources whose shard selector some replica applied itself
	reshards        float64           // the replicas' informer rebuilds (a group's handovers)
	informers       int               // sharded informers: resources × replicas, 0 for 1 replica
	peakRSS         []int64           // KiB
	restRSS         []int64           // KiB, settle after every object was annotated
	server          serverState       // kube-apiserver's once every object was annotated
}

func (r shardRun) objectsPerSecond() float64 { return float64(r.objects) / r.converge.Seconds() }

// measureShards resets the objects, starts the replicas of s and waits
// until every object is annotated, then stops them.
func measureShards(ctx context.Context, b *rig.Bench, ka *rig.Runner, s shardSetup, round int) (shardRun, error) {
	res := shardRun{setup: s.name, replicas: s.replicas, round: round, objects: b.Objects}
	if err := b.Reset(ctx); err != nil {
		return res, err
	}
	w, err := b.OpenWindow(ctx)
	if err != nil {
		return res, err
	}
	before, err := b.ControlPlaneCPU(ctx)
	if err != nil {
		return res, err
	}
	progress.Logf("Round %d: starting %s", round, s.name)
	rs, err := startReplicas(b, ka, s, fmt.Sprintf("%s-round%d", s.id, round), nil)
	if err != nil {
		return res, err
	}
	defer func() { _ = rs.stop() }() // in case of an error; stopping twice is fine
	if err := b.Tracker.WaitFor(ctx, s.name, b.Opts.Timeout, b.Tracker.Is(b.Objects, b.Objects), rs.alive); err != nil {
		return res, err
	}
	first, last := b.Tracker.Span()
	res.first, res.converge, res.cpu = first.Sub(rs[0].Started), last.Sub(rs[0].Started), rs.cpu()
	after, err := b.ControlPlaneCPU(ctx)
	if err != nil {
		return res, err
	}
	res.control = after.Sub(before)
	if res.server, err = serverNow(ctx, b); err != nil {
		return res, err
	}
	if res.cached, err = rs.cached(ctx); err != nil {
		return res, err
	}
	if s.replicas > 1 {
		res.informers = s.replicas * len(workload.Resources)
		if res.serverSelectors, res.clientSide, err = rs.selectorModes(ctx); err != nil {
			return res, err
		}
		reshards, err := rs.metric(ctx, "kube_annotator_shard_reshards_total", nil)
		if err != nil {
			return res, err
		}
		res.reshards = table.Sum(reshards)
	}
	if err := progress.Sleep(ctx, rig.Settle); err != nil {
		return res, err
	}
	if res.run, err = w.Close(ctx); err != nil {
		return res, err
	}
	res.restRSS = rs.rss()
	if err := rs.stop(); err != nil {
		return res, err
	}
	res.peakRSS = rs.peakRSS()
	progress.Logf("%s: every object annotated after %.1fs (%.0f objects/s); %d PATCH; replicas' CPU %.1fs, kube-apiserver's %.1fs, etcd's %.1fs; cached %v",
		s.name, res.converge.Seconds(), res.objectsPerSecond(), res.run.Patch, table.Sum(res.cpu), res.control.APIServer, res.control.Etcd, res.cached)
	return res, nil
}

// Measure measures sharding at --objects objects of the current shape:
// first each setup's memory with no objects; then, for each round, each
// setup in turn and (unless --reshard=false) a group that grows and
// shrinks; then each setup's memory again. Once the objects are seeded it
// returns what it measured, also with an error.
func Measure(ctx context.Context, b *rig.Bench, ka *rig.Runner) (*Results, error) {
	setups := setupsOf(b.Opts)
	bases := make([]child.Heap, len(setups))
	for i, s := range setups {
		p, err := measureMemory(ctx, b, ka, s)
		if err != nil {
			return nil, fmt.Errorf("memory of %s with no objects: %w", s.name, err)
		}
		bases[i] = p.meanHeap()
	}
	if err := b.Seed(ctx, b.Opts.Objects); err != nil {
		return nil, err
	}
	res := &Results{shards: b.Opts.Shards, objects: b.Objects, memoryWindow: b.Opts.MemoryWindow}
	for round := 1; round <= b.Opts.Rounds; round++ {
		for _, s := range setups {
			run, err := measureShards(ctx, b, ka, s, round)
			if err != nil {
				return res, fmt.Errorf("round %d, %s: %w", round, s.name, err)
			}
			res.runs = append(res.runs, run)
		}
		if !b.Opts.Reshard {
			continue
		}
		rr, err := reshard(ctx, b, ka, round)
		if err != nil {
			return res, fmt.Errorf("round %d, resharding: %w", round, err)
		}
		res.reshards = append(res.reshards, rr)
	}
	for i, s := range setups {
		p, err := measureMemory(ctx, b, ka, s)
		if err != nil {
			return res, fmt.Errorf("memory of %s: %w", s.name, err)
		}
		p.base = bases[i]
		res.memory = append(res.memory, p)
	}
	return res, nil
}
