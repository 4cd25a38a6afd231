package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// options are the benchmark's command-line flags.
type options struct {
	binary        string
	objects       int
	rounds        int
	workers       int
	steady        time.Duration
	latency       int
	memoryObjects []int
	memoryWindow  time.Duration
	timeout       time.Duration
	crCacheReads  bool
	realistic     bool
	goMemLimit    int64
	// shards, when not 0, is the number of replicas the sharding phases
	// split the objects among.
	shards int
	// reshard says whether the sharding rounds also measure a group
	// growing and shrinking.
	reshard bool
	// setups, when not empty, are the ids of the sharding setups the
	// rounds measure.
	setups []string
	// profileDir, when set, is where a CPU profile of kube-apiserver is
	// written for each run, over its first profileFor.
	profileDir string
	profileFor time.Duration
	// variants are more kube-annotator runners; runners, when not empty,
	// the runners the rounds run.
	variants []variant
	runners  []string
	// clients are the benchmark's own requests in flight while it seeds
	// and resets; etcdQuota is etcd's --quota-backend-bytes.
	clients   int
	etcdQuota int64
}

// shapes are the shapes of objects the benchmark measures with.
func (o options) shapes() []shape {
	if o.realistic {
		return []shape{small, realistic}
	}
	return []shape{small}
}

// main runs the benchmark. What it measures, exactly:
//
// It seeds --objects objects (Deployments and ReplicaSets with no replicas,
// Pods, Frigates: a quarter each, over a few namespaces), then, for
// --rounds rounds, runs each of five runners in turn, each annotating
// every object with sample-controller: "True" using --workers workers:
//
//   - raw: this program's "raw" subcommand; one paginated list of each
//     resource and a merge patch per object through the dynamic client
//     (whole objects in JSON), no cache, no queue; it exits when done.
//   - raw-metadata: the same through the metadata client, whose lists and
//     patches the API server answers with the objects' metadata only, in
//     protobuf: the least any program can do.
//   - raw-metadata-watch: the same, watching the resources' metadata
//     meanwhile, as a controller does: it receives the event of each of
//     its own writes, which the API server converts to metadata for it.
//   - controller-runtime: test/bench/crrunner, the controller a Kubebuilder
//     user would write (its own module, so that controller-runtime never
//     enters the product).
//   - kube-annotator: the product binary (--binary), `run` with a rules file
//     for the same four resources.
//
// The benchmark builds the first three as `make build` builds the last,
// without cgo, so that their peak RSS compare.
//
// The objects are small: they carry nothing but what their kind needs.
// With --realistic, everything is measured again on realistic objects,
// which carry what objects in a cluster do: ten labels, four annotations
// among which kubectl's last-applied-configuration (about 3 KB), and the
// managedFields entries of kubectl and Helm.
//
// A run lasts from the process's start until the benchmark's own watch sees
// every object annotated. Controllers then keep running: the API server
// must serve no write during --steady of steady state, nor during --steady
// after a restart. Between runs the annotation is removed from every object.
// Request counts are the API server's own (apiserver_request_total) on the
// four resources, taken after the reset so that it is not counted; so is
// the CPU time kube-apiserver and etcd spend on each runner
// (process_cpu_seconds_total on their /metrics, from just before its start
// until every object is annotated). --apiserver-profile writes a CPU
// profile of kube-apiserver for each run; --variant adds other builds or
// settings of kube-annotator as runners, --runners picks the runners.
//
// Then, for kube-annotator alone, in fresh processes once converged: its Go
// heap (from its metrics endpoint; also with GOGC=10, which keeps it close
// to the live heap), peak and at-rest RSS, and the time from its start
// until its informers synced, at 0 and --objects objects, and at each
// --memory-objects; at the largest, how long a reload takes whose rules
// make the caches keep one more label (every informer lists again); at
// idle, the latency from creating an object to seeing it annotated; and at
// the largest count, its heap again with a when: condition on a field of
// the Deployments' spec (whose informer then caches the fields read, not
// the metadata alone), and the difference per Deployment.
//
// Last, annotating at creation: --latency objects (Deployments,
// ReplicaSets, Pods and Frigates in turn) are created one at a time, each
// once the previous one was seen annotated, twice, each time while a fresh
// kube-annotator runs: first as above, then with --admission-policies,
// once its MutatingAdmissionPolicy and binding exist and the API server
// applies them (probe Pods are created until one's create response carries
// the annotation). For each: how many create responses carried the
// annotation, the create→annotated latency (0 for those), the PATCH
// requests the API server served per object created (the controller's
// writes: 1 without the policy, 0 with it), and the create request's own
// latency at the client, whose difference between the two is what the
// policy costs each create. The policy is deleted when done.
//
// With --shards N, the benchmark measures sharding instead of the four
// runners and kube-annotator's memory at --objects (see shards.go): the
// control plane runs with the ShardedListAndWatch feature gate, so that
// each replica receives only its share, and for --rounds rounds one
// kube-annotator replica, N static shards (--shard i --total-shards N)
// and a shard group of N replicas (--shard-group) annotate every object
// in turn; then (unless --reshard=false) a shard group grows from N to
// N+1 replicas and shrinks back while it converges; then fresh replicas of
// each setup, with GOGC=10, show each replica's cached objects and heap,
// less the heap of the same setup measured before the objects were
// seeded. Both static
// shards and a group are measured because they differ where it matters
// here: static shards know their range from the start, group members
// first find each other through Leases and may hand ranges over.
// --latency, --steady and --memory-objects do not apply.
//
// Results are medians over the rounds and ratios between runners measured
// in the same run: absolute numbers depend on the machine and on whatever
// else runs on it. Progress goes to stderr, the tables to stdout.
func main() {
	if len(os.Args) > 1 && os.Args[1] == rawCommand {
		os.Exit(rawMain(os.Args[2:]))
	}
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		logf("FAILED after %v: %v", since(started), err)
		stop()
		os.Exit(1)
	}
	logf("Done in %v", since(started))
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.binary, "binary", "bin/kube-annotator", "kube-annotator binary to measure (make build)")
	fs.IntVar(&o.objects, "objects", 10000, "objects to seed, a quarter each of deployments, replicasets, pods and frigates (up to 1000000)")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds of raw, raw-metadata, controller-runtime, kube-annotator (with --shards: of 1 replica, static shards, a shard group, resharding); the tables show medians (0: measure memory only)")
	fs.IntVar(&o.workers, "workers", 8, "workers of every runner")
	fs.DurationVar(&o.steady, "steady", 30*time.Second, "how long writes are counted in steady state, and again after a restart")
	fs.IntVar(&o.latency, "latency", 200, "objects created one at a time to measure create→annotated latency, and again without and with the admission policy (0 skips both)")
	fs.Func("memory-objects", "comma-separated larger object counts at which to also measure kube-annotator's memory, e.g. 100000 (seeds more objects after the rounds)", func(s string) error {
		for f := range strings.SplitSeq(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return err
			}
			o.memoryObjects = append(o.memoryObjects, n)
		}
		return nil
	})
	fs.DurationVar(&o.memoryWindow, "memory-window", 10*time.Second, "how long kube-annotator's heap is sampled once converged")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "longest a runner may take to annotate every object")
	fs.Int64Var(&o.goMemLimit, "gomemlimit", 0, "GOMEMLIMIT in bytes for kube-annotator while its memory is measured, as deploy/ sets it from the memory limit (268435456 for 256Mi); 0 leaves it unset")
	fs.BoolVar(&o.realistic, "realistic", false, "measure everything again with realistic objects: ten labels, four annotations among which a 3 KB kubectl last-applied-configuration, managedFields of kubectl and Helm")
	fs.IntVar(&o.shards, "shards", 0, "measure sharding instead of the four runners: 1 kube-annotator replica vs this many, as static shards and as a shard group, and a group growing by one and shrinking back (0: off)")
	fs.Func("setups", "with --shards: comma-separated sharding setups the rounds measure, among single, static and group (default: all three)", func(v string) error {
		for id := range strings.SplitSeq(v, ",") {
			if !slices.Contains(shardSetupIDs, id) {
				return fmt.Errorf("no setup %q; there are %s", id, strings.Join(shardSetupIDs, ", "))
			}
			o.setups = append(o.setups, id)
		}
		return nil
	})
	fs.BoolVar(&o.reshard, "reshard", true, "with --shards: also measure, in each round, a shard group growing by one and shrinking back")
	fs.StringVar(&o.profileDir, "apiserver-profile", "", "directory to write a CPU profile of kube-apiserver into for each run of each runner, over its first --apiserver-profile-for (empty: none; profiling costs the API server some CPU)")
	fs.DurationVar(&o.profileFor, "apiserver-profile-for", 10*time.Second, "how long each kube-apiserver CPU profile lasts, from the runner's start")
	fs.Func("variant", "one more runner, repeatable: NAME=BINARY[,ENV=VALUE|,--flag=value]..., kube-annotator `run` from BINARY (empty: --binary) with that environment and those flags added", func(s string) error {
		v, err := parseVariant(s)
		o.variants = append(o.variants, v)
		return err
	})
	fs.Func("runners", "comma-separated runners the rounds run (default: all, among which each --variant)", func(s string) error {
		o.runners = strings.Split(s, ",")
		return nil
	})
	fs.IntVar(&o.clients, "clients", defaultClients, "the benchmark's own requests in flight while it seeds, resets and deletes objects")
	fs.Int64Var(&o.etcdQuota, "etcd-quota-bytes", defaultEtcdQuota, "etcd's --quota-backend-bytes: every object, its revisions until the API server compacts them (every 5 min) and their free pages must fit")
	fs.BoolVar(&o.crCacheReads, "cr-cache-reads", false, "let the controller-runtime baseline read unstructured objects from its cache instead of its default GET to the API server")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, o.validate()
}

// maxObjects bounds what the benchmark seeds, so that a typo cannot fill
// the machine. A million small objects take some 2–3 GiB in kube-apiserver's
// watch cache and as much in etcd.
const maxObjects = 1000000

// defaultEtcdQuota is etcd's quota unless --etcd-quota-bytes says
// otherwise: realistic objects fill etcd's default (2 GiB) before the API
// server's compaction frees it.
const defaultEtcdQuota = 8 << 30

func (o options) validate() error {
	var errs []error
	if o.objects < len(resources) || o.objects > maxObjects {
		errs = append(errs, fmt.Errorf("--objects must be between %d and %d, got %d", len(resources), maxObjects, o.objects))
	}
	prev := o.objects
	for _, n := range o.memoryObjects {
		if n <= prev || n > maxObjects {
			errs = append(errs, fmt.Errorf("--memory-objects must increase from --objects (%d) up to %d, got %d", o.objects, maxObjects, n))
		}
		prev = n
	}
	if o.rounds < 0 {
		errs = append(errs, fmt.Errorf("--rounds must not be negative, got %d", o.rounds))
	}
	if o.workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1, got %d", o.workers))
	}
	if o.steady <= 0 || o.memoryWindow <= 0 || o.timeout <= 0 {
		errs = append(errs, errors.New("--steady, --memory-window and --timeout must be positive"))
	}
	if o.goMemLimit < 0 {
		errs = append(errs, fmt.Errorf("--gomemlimit must not be negative, got %d", o.goMemLimit))
	}
	if o.shards < 0 || o.shards == 1 {
		errs = append(errs, fmt.Errorf("--shards must be 0 (off) or at least 2, got %d", o.shards))
	}
	if o.shards > maxShards {
		errs = append(errs, fmt.Errorf("--shards must be at most %d, got %d", maxShards, o.shards))
	}
	if len(o.setups) > 0 && (o.shards == 0 || !slices.Contains(o.setups, "single")) {
		errs = append(errs, errors.New("--setups needs --shards and must include single, to which the other setups are compared"))
	}
	if o.shards > 0 && len(o.memoryObjects) > 0 {
		errs = append(errs, errors.New("--memory-objects cannot be used with --shards, which measures sharding only"))
	}
	if o.profileDir != "" && (o.profileFor < time.Second || o.profileFor > profileLimit) {
		errs = append(errs, fmt.Errorf("--apiserver-profile-for must be between 1s and %v, got %v", profileLimit, o.profileFor))
	}
	if o.clients < 1 {
		errs = append(errs, fmt.Errorf("--clients must be at least 1, got %d", o.clients))
	}
	if o.etcdQuota < 2<<30 {
		errs = append(errs, fmt.Errorf("--etcd-quota-bytes must be at least %d (2 GiB, etcd's default), got %d", int64(2<<30), o.etcdQuota))
	}
	if o.latency < 0 {
		errs = append(errs, fmt.Errorf("--latency must not be negative, got %d", o.latency))
	}
	return errors.Join(errs...)
}

// started is when the benchmark started; progress lines show the time since.
var started = time.Now()

// logf prints a progress line on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[bench %7s] "+format+"\n", append([]any{since(started)}, args...)...)
}

// since is the time since t, rounded for humans.
func since(t time.Time) time.Duration {
	return time.Since(t).Round(100 * time.Millisecond)
}

// progress calls report every interval until the returned stop is called.
func progress(interval time.Duration, report func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				report()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
