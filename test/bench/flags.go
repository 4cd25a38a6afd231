package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/sharding"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
)

// parseFlags parses the benchmark's command line into Options and
// validates them.
func parseFlags(args []string) (rig.Options, error) {
	var o rig.Options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.Binary, "binary", "bin/kube-annotator", "kube-annotator binary to measure (make build)")
	fs.IntVar(&o.Objects, "objects", 10000, "objects to seed, a quarter each of deployments, replicasets, pods and frigates (up to 1000000)")
	fs.IntVar(&o.Rounds, "rounds", 3, "rounds of raw, raw-metadata, controller-runtime, kube-annotator (with --shards: of 1 replica, static shards, a shard group, resharding; with --owners: of the relabel and the raw loop); the tables show medians (0: measure memory only)")
	fs.IntVar(&o.Workers, "workers", 8, "workers of every runner")
	fs.DurationVar(&o.Steady, "steady", 30*time.Second, "how long writes are counted in steady state, and again after a restart")
	fs.IntVar(&o.Latency, "latency", 200, "objects created one at a time to measure create→annotated latency, and again without and with the admission policy (0 skips both)")
	fs.Func("memory-objects", "comma-separated larger object counts at which to also measure kube-annotator's memory, e.g. 100000 (seeds more objects after the rounds)", func(s string) error {
		for f := range strings.SplitSeq(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return err
			}
			o.MemoryObjects = append(o.MemoryObjects, n)
		}
		return nil
	})
	fs.DurationVar(&o.MemoryWindow, "memory-window", 10*time.Second, "how long kube-annotator's heap is sampled once converged")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "longest a runner may take to annotate every object")
	fs.Int64Var(&o.GoMemLimit, "gomemlimit", 0, "GOMEMLIMIT in bytes for kube-annotator while its memory is measured, as deploy/ sets it from the memory limit (268435456 for 256Mi); 0 leaves it unset")
	fs.BoolVar(&o.Realistic, "realistic", false, "measure everything again with realistic objects: ten labels, four annotations among which a 3 KB kubectl last-applied-configuration, managedFields of kubectl and Helm")
	fs.Func("shapes", "comma-separated shapes of objects to measure with, among small and realistic (default: small, and realistic too with --realistic)", func(v string) error {
		for name := range strings.SplitSeq(v, ",") {
			if name != workload.Small.Name && name != workload.Realistic.Name {
				return fmt.Errorf("no shape %q; there are %s and %s", name, workload.Small.Name, workload.Realistic.Name)
			}
			o.ShapeNames = append(o.ShapeNames, name)
		}
		return nil
	})
	fs.IntVar(&o.Shards, "shards", 0, "measure sharding instead of the four runners: 1 kube-annotator replica vs this many, as static shards and as a shard group, and a group growing by one and shrinking back (0: off)")
	fs.Func("setups", "with --shards: comma-separated sharding setups the rounds measure, among single, static and group (default: all three)", func(v string) error {
		for id := range strings.SplitSeq(v, ",") {
			if !slices.Contains(sharding.SetupIDs, id) {
				return fmt.Errorf("no setup %q; there are %s", id, strings.Join(sharding.SetupIDs, ", "))
			}
			o.Setups = append(o.Setups, id)
		}
		return nil
	})
	fs.BoolVar(&o.Reshard, "reshard", true, "with --shards: also measure, in each round, a shard group growing by one and shrinking back")
	fs.StringVar(&o.ProfileDir, "apiserver-profile", "", "directory to write a CPU profile of kube-apiserver into for each run of each runner, over its first --apiserver-profile-for (empty: none; profiling costs the API server some CPU)")
	fs.DurationVar(&o.ProfileFor, "apiserver-profile-for", 10*time.Second, "how long each kube-apiserver CPU profile lasts, from the runner's start")
	fs.Func("variant", "one more runner, repeatable: NAME=BINARY[,ENV=VALUE|,--flag=value]..., kube-annotator `run` from BINARY (empty: --binary) with that environment and those flags added", func(s string) error {
		v, err := parseVariant(s)
		o.Variants = append(o.Variants, v)
		return err
	})
	fs.Func("runners", "comma-separated runners the rounds run (default: all, among which each --variant)", func(s string) error {
		o.Runners = strings.Split(s, ",")
		return nil
	})
	fs.IntVar(&o.Clients, "clients", defaultClients, "the benchmark's own requests in flight while it seeds, resets and deletes objects")
	fs.Int64Var(&o.EtcdQuota, "etcd-quota-bytes", defaultEtcdQuota, "etcd's --quota-backend-bytes: every object, its revisions until the API server compacts them (every 5 min) and their free pages must fit")
	fs.IntVar(&o.Owners, "owners", 0, "measure values read from owners instead of the runners: relabel one Deployment of this many Pods, made by kube-controller-manager, against the raw PATCH loop on the same Pods (0: off)")
	fs.IntVar(&o.OwnersCached, "owners-cached", 2000, "with --owners: Deployments with no replicas (each with its ReplicaSet) added to measure kube-annotator's heap per owner cached (0: none)")
	fs.BoolVar(&o.CRCacheReads, "cr-cache-reads", false, "let the controller-runtime baseline read unstructured objects from its cache instead of its default GET to the API server")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, validate(o)
}

// defaultEtcdQuota is etcd's quota unless --etcd-quota-bytes says
// otherwise: realistic objects fill etcd's default (2 GiB) before the API
// server's compaction frees it.
const defaultEtcdQuota = 8 << 30

// MaxOwnerPods bounds --owners and MaxOwnersCached --owners-cached, so
// that a typo cannot fill the machine with Pods and Deployments.
const (
	MaxOwnerPods    = 50000
	MaxOwnersCached = 20000
)

// defaultClients bounds the benchmark's own requests in flight while it
// seeds, resets and cleans up, unless --clients says otherwise.
const defaultClients = 16

// validate checks o, every error naming its flag.
func validate(o rig.Options) error {
	var errs []error
	if o.Objects < len(workload.Resources) || o.Objects > workload.MaxObjects {
		errs = append(errs, fmt.Errorf("--objects must be between %d and %d, got %d", len(workload.Resources), workload.MaxObjects, o.Objects))
	}
	prev := o.Objects
	for _, n := range o.MemoryObjects {
		if n <= prev || n > workload.MaxObjects {
			errs = append(errs, fmt.Errorf("--memory-objects must increase from --objects (%d) up to %d, got %d", o.Objects, workload.MaxObjects, n))
		}
		prev = n
	}
	if o.Rounds < 0 {
		errs = append(errs, fmt.Errorf("--rounds must not be negative, got %d", o.Rounds))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1, got %d", o.Workers))
	}
	if o.Steady <= 0 || o.MemoryWindow <= 0 || o.Timeout <= 0 {
		errs = append(errs, errors.New("--steady, --memory-window and --timeout must be positive"))
	}
	if o.GoMemLimit < 0 {
		errs = append(errs, fmt.Errorf("--gomemlimit must not be negative, got %d", o.GoMemLimit))
	}
	if o.Shards < 0 || o.Shards == 1 {
		errs = append(errs, fmt.Errorf("--shards must be 0 (off) or at least 2, got %d", o.Shards))
	}
	if o.Shards > sharding.MaxShards {
		errs = append(errs, fmt.Errorf("--shards must be at most %d, got %d", sharding.MaxShards, o.Shards))
	}
	if len(o.Setups) > 0 && (o.Shards == 0 || !slices.Contains(o.Setups, "single")) {
		errs = append(errs, errors.New("--setups needs --shards and must include single, to which the other setups are compared"))
	}
	if o.Shards > 0 && len(o.MemoryObjects) > 0 {
		errs = append(errs, errors.New("--memory-objects cannot be used with --shards, which measures sharding only"))
	}
	if o.ProfileDir != "" && (o.ProfileFor < time.Second || o.ProfileFor > rig.ProfileLimit) {
		errs = append(errs, fmt.Errorf("--apiserver-profile-for must be between 1s and %v, got %v", rig.ProfileLimit, o.ProfileFor))
	}
	if o.Clients < 1 {
		errs = append(errs, fmt.Errorf("--clients must be at least 1, got %d", o.Clients))
	}
	if o.EtcdQuota < 2<<30 {
		errs = append(errs, fmt.Errorf("--etcd-quota-bytes must be at least %d (2 GiB, etcd's default), got %d", int64(2<<30), o.EtcdQuota))
	}
	if o.Owners < 0 || o.Owners > MaxOwnerPods {
		errs = append(errs, fmt.Errorf("--owners must be between 0 (off) and %d, got %d", MaxOwnerPods, o.Owners))
	}
	if o.OwnersCached < 0 || o.OwnersCached > MaxOwnersCached {
		errs = append(errs, fmt.Errorf("--owners-cached must be between 0 and %d, got %d", MaxOwnersCached, o.OwnersCached))
	}
	if o.Owners > 0 && o.Shards > 0 {
		errs = append(errs, errors.New("--owners cannot be used with --shards: each measures instead of the runners"))
	}
	if o.Latency < 0 {
		errs = append(errs, fmt.Errorf("--latency must not be negative, got %d", o.Latency))
	}
	return errors.Join(errs...)
}

// parseVariant parses NAME=BINARY[,ENV=VALUE|,--flag=value]...; an empty
// BINARY is --binary.
func parseVariant(s string) (rig.Variant, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || strings.ContainsAny(name, " /") {
		return rig.Variant{}, fmt.Errorf("--variant %q: want NAME=BINARY[,ENV=VALUE|,--flag=value]...", s)
	}
	fields := strings.Split(rest, ",")
	v := rig.Variant{Name: name, Binary: fields[0]}
	for _, f := range fields[1:] {
		switch {
		case strings.HasPrefix(f, "--"):
			v.Args = append(v.Args, f)
		case strings.Contains(f, "="):
			v.Env = append(v.Env, f)
		default:
			return rig.Variant{}, fmt.Errorf("--variant %q: %q is neither ENV=VALUE nor --flag=value", s, f)
		}
	}
	if slices.Contains([]string{rig.RawRunner, rig.RawMetadataRunner, rig.RawMetadataWatchRunner, rig.CRRunner, rig.KARunner}, name) {
		return rig.Variant{}, fmt.Errorf("--variant %q: %s names a runner already", s, name)
	}
	return v, nil
}
