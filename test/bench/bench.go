package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// bench is one benchmark: the control plane, the benchmark's clients and
// watch, and the objects seeded so far.
type bench struct {
	opts options
	dir  string // the runners' binaries and logs, the rules file
	env  *h.Env
	// dynamic and metadata are the benchmark's own clients, with no
	// client-side rate limiting.
	dynamic  dynamic.Interface
	metadata metadata.Interface
	tracker  *tracker
	// rules is kube-annotator's rules file.
	rules string
	// shape is the shape of the objects seeded, objects their number.
	shape   shape
	objects int
}

// run runs the whole benchmark and prints its tables, also those of the
// runs that completed when it fails.
func run(ctx context.Context, o options) (err error) {
	if _, err := os.Stat(o.binary); err != nil {
		return fmt.Errorf("kube-annotator binary: %w (build it with `make build`)", err)
	}
	b := &bench{opts: o, shape: o.shapes()[0]}
	if b.dir, err = os.MkdirTemp("", "kube-annotator-bench-"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			logf("Kept the runners' logs in %s", b.dir)
			return
		}
		_ = os.RemoveAll(b.dir)
	}()
	bins, err := buildRunners(ctx, b.dir, o.measured(crRunner))
	if err != nil {
		return err
	}

	// envtest, which test/harness uses, logs through controller-runtime's
	// logger, which prints a stack trace unless it is set.
	ctrllog.SetLogger(klog.NewKlogr())
	logf("Starting etcd and kube-apiserver v%s from %s", h.K8sVersion(), h.AssetsDir())
	etcd := map[string]string{"quota-backend-bytes": strconv.FormatInt(o.etcdQuota, 10)}
	if b.env, err = h.StartWith(h.Options{EtcdFlags: etcd, APIServerFlags: o.apiServerFlags()}); err != nil {
		return err
	}
	defer func() {
		logf("Stopping kube-apiserver and etcd")
		if serr := b.env.Stop(); serr != nil {
			logf("  %v", serr)
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the benchmark's watch before the control plane
	if err := b.connect(ctx); err != nil {
		return err
	}
	runners, err := b.newRunners(bins)
	if err != nil {
		return err
	}
	logf("Control plane up at %s; runners: %s", b.env.Config.Host, runnerNames(runners))

	var res results
	defer func() { res.print(os.Stdout, o) }()
	return b.phases(ctx, runners, &res)
}

// connect builds the benchmark's clients and starts its watch.
func (b *bench) connect(ctx context.Context) error {
	cfg := rest.CopyConfig(b.env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	var err error
	if b.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	if b.metadata, err = metadata.NewForConfig(cfg); err != nil {
		return err
	}
	watchCfg := rest.CopyConfig(cfg)
	requests := &h.Counter{}
	requests.Wrap(watchCfg)
	watchClient, err := metadata.NewForConfig(watchCfg)
	if err != nil {
		return err
	}
	b.tracker, err = startTracker(ctx, watchClient, requests)
	return err
}

// phases runs what the benchmark measures, in order, into res: the
// memory of kube-annotator with no objects, then everything else for each
// shape of objects in turn, and last objects created with and without
// kube-annotator's admission policy.
func (b *bench) phases(ctx context.Context, runners []*runner, res *results) error {
	ka := runners[slices.IndexFunc(runners, func(r *runner) bool { return r.name == kaRunner })]
	if err := b.createNamespaces(ctx); err != nil {
		return err
	}
	logf("Measuring kube-annotator's memory with no objects")
	var err error
	if res.base, err = b.memory(ctx, ka, memoryOptions{}); err != nil {
		return err
	}
	for i, sh := range b.opts.shapes() {
		if i > 0 {
			if err := b.deleteSeeded(ctx); err != nil {
				return err
			}
		}
		b.shape = sh
		sr := &shapeResults{shape: sh.name}
		res.shapes = append(res.shapes, sr)
		latency := 0
		if i == 0 {
			latency = b.opts.latency
		}
		phase := func() error { return b.shapePhases(ctx, runners, ka, sr, latency) }
		if b.opts.shards > 0 {
			phase = func() error { return b.shardPhases(ctx, ka, sr) }
		}
		if err := phase(); err != nil {
			return fmt.Errorf("%s objects: %w", sh.name, err)
		}
		res.latency = append(res.latency, sr.latency...)
	}
	if b.opts.latency == 0 {
		return nil
	}
	res.admission, err = b.admission(ctx, ka, b.opts.latency)
	return err
}

// shapePhases measures with objects of the current shape: the rounds at
// --objects, then kube-annotator's memory there and at each
// --memory-objects, with latency objects' latency at the first and the
// time a rebuild of its caches takes at the last.
func (b *bench) shapePhases(ctx context.Context, runners []*runner, ka *runner, sr *shapeResults, latency int) error {
	if err := b.seed(ctx, b.opts.objects); err != nil {
		return err
	}
	for round := 1; round <= b.opts.rounds; round++ {
		for _, r := range runners {
			if !b.opts.measured(r.name) {
				continue
			}
			run, err := b.measure(ctx, r, round)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, r.name, err)
			}
			sr.runs = append(sr.runs, run)
		}
	}
	counts := append([]int{b.opts.objects}, b.opts.memoryObjects...)
	for i, n := range counts {
		if n > b.objects {
			if err := b.seed(ctx, n); err != nil {
				return err
			}
		}
		if b.opts.rounds == 0 || i > 0 {
			logf("Converging the %s objects with kube-annotator, then measuring its memory at %d objects", b.shape.name, n)
			converge, err := b.idle(ctx, ka, fmt.Sprintf("%s-%d-objects-converge", b.shape.name, n), idleOptions{env: b.memoryEnv()})
			if err != nil {
				return err
			}
			logf("kube-annotator converged %d objects with peak RSS %.1f MiB%s", n, float64(converge.peakRSS)/1024, b.memLimitNote(converge.peakRSS))
		} else {
			logf("Measuring kube-annotator's memory at %d %s objects", n, b.shape.name)
		}
		opts := memoryOptions{rebuild: i == len(counts)-1}
		if i == 0 {
			opts.latency = latency
		}
		point, err := b.memory(ctx, ka, opts)
		if err != nil {
			return err
		}
		sr.memory = append(sr.memory, point)
		sr.latency = append(sr.latency, point.latency...)
		if i == len(counts)-1 {
			if sr.when, err = b.measureWhen(ctx, ka, point); err != nil {
				return err
			}
		}
	}
	return nil
}

func runnerNames(runners []*runner) []string {
	names := make([]string, len(runners))
	for i, r := range runners {
		names[i] = r.name
	}
	return names
}

// results is what the benchmark measured.
type results struct {
	// base is kube-annotator's memory with no objects.
	base    memoryPoint
	shapes  []*shapeResults
	latency []time.Duration
	// admission are objects created without and with kube-annotator's
	// admission policy.
	admission []admissionRun
}

// shapeResults is what the benchmark measured with one shape of objects.
type shapeResults struct {
	shape   string
	runs    []runResult
	memory  []memoryPoint
	latency []time.Duration
	// shards is what --shards measured, nil without it.
	shards *shardResults
	// when is the memory with a when: condition on Deployments, nil
	// with --shards.
	when *whenPoint
}
