package main

import (
	"context"
	"fmt"
	"os"
	"slices"
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
	// objects is the number of objects seeded.
	objects int
}

// run runs the whole benchmark and prints its tables, also those of the
// runs that completed when it fails.
func run(ctx context.Context, o options) (err error) {
	if _, err := os.Stat(o.binary); err != nil {
		return fmt.Errorf("kube-annotator binary: %w (build it with `make build`)", err)
	}
	b := &bench{opts: o}
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
	bins, err := buildRunners(ctx, b.dir)
	if err != nil {
		return err
	}

	// envtest, which test/harness uses, logs through controller-runtime's
	// logger, which prints a stack trace unless it is set.
	ctrllog.SetLogger(klog.NewKlogr())
	logf("Starting etcd and kube-apiserver v%s from %s", h.K8sVersion, h.AssetsDir())
	if b.env, err = h.Start(); err != nil {
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

// phases runs what the benchmark measures, in order, into res.
func (b *bench) phases(ctx context.Context, runners []*runner, res *results) error {
	ka := runners[slices.IndexFunc(runners, func(r *runner) bool { return r.name == kaRunner })]
	if err := b.createNamespaces(ctx); err != nil {
		return err
	}
	logf("Measuring kube-annotator's memory with no objects")
	point, _, err := b.memory(ctx, ka, 0)
	if err != nil {
		return err
	}
	res.memory = append(res.memory, point)

	if err := b.seed(ctx, b.opts.objects); err != nil {
		return err
	}
	for round := 1; round <= b.opts.rounds; round++ {
		for _, r := range runners {
			run, err := b.measure(ctx, r, round)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, r.name, err)
			}
			res.runs = append(res.runs, run)
		}
	}

	logf("Measuring kube-annotator's memory and latency at %d objects", b.objects)
	if point, res.latency, err = b.memory(ctx, ka, b.opts.latency); err != nil {
		return err
	}
	res.memory = append(res.memory, point)

	for _, n := range b.opts.memoryObjects {
		if err := b.seed(ctx, n); err != nil {
			return err
		}
		logf("Converging the new objects with kube-annotator, then measuring its memory at %d objects", n)
		converge, err := b.idle(ctx, ka, fmt.Sprintf("%d-objects-converge", n), b.memoryEnv(), 0)
		if err != nil {
			return err
		}
		logf("kube-annotator converged %d objects with peak RSS %.1f MiB%s", n, float64(converge.peakRSS)/1024, b.memLimitNote(converge.peakRSS))
		point, _, err := b.memory(ctx, ka, 0)
		if err != nil {
			return err
		}
		res.memory = append(res.memory, point)
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
	runs    []runResult
	memory  []memoryPoint
	latency []time.Duration
}
