package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kube-annotator/kube-annotator/test/bench/memory"
	"github.com/kube-annotator/kube-annotator/test/bench/owners"
	"github.com/kube-annotator/kube-annotator/test/bench/policy"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/rounds"
	"github.com/kube-annotator/kube-annotator/test/bench/sharding"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// run runs the whole benchmark and prints its tables, also those of the
// runs that completed when it fails.
func run(ctx context.Context, o rig.Options) (err error) {
	if _, err := os.Stat(o.Binary); err != nil {
		return fmt.Errorf("kube-annotator binary: %w (build it with `make build`)", err)
	}
	b := &rig.Bench{Opts: o, Shape: o.Shapes()[0]}
	if b.Dir, err = os.MkdirTemp("", "kube-annotator-bench-"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			progress.Logf("Kept the runners' logs in %s", b.Dir)
			return
		}
		_ = os.RemoveAll(b.Dir)
	}()
	bins, err := rig.BuildRunners(ctx, b.Dir, o.Measured(rig.CRRunner) && o.Owners == 0)
	if err != nil {
		return err
	}

	// envtest, which test/harness uses, logs through controller-runtime's
	// logger, which prints a stack trace unless it is set.
	ctrllog.SetLogger(klog.NewKlogr())
	progress.Logf("Starting etcd and kube-apiserver v%s from %s", h.K8sVersion(), h.AssetsDir())
	etcd := map[string]string{"quota-backend-bytes": strconv.FormatInt(o.EtcdQuota, 10)}
	if b.Env, err = h.StartWith(h.Options{EtcdFlags: etcd, APIServerFlags: o.APIServerFlags()}); err != nil {
		return err
	}
	defer func() {
		progress.Logf("Stopping kube-apiserver and etcd")
		if serr := b.Env.Stop(); serr != nil {
			progress.Logf("  %v", serr)
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the benchmark's watch before the control plane
	if err := b.Connect(ctx); err != nil {
		return err
	}
	runners, err := b.NewRunners(bins)
	if unknown := (*rig.UnknownRunnerError)(nil); errors.As(err, &unknown) {
		return fmt.Errorf("--runners: %w", err)
	}
	if err != nil {
		return err
	}
	progress.Logf("Control plane up at %s; runners: %s", b.Env.Config.Host, rig.RunnerNames(runners))

	var res results
	defer func() { res.print(os.Stdout, o) }()
	return phases(ctx, b, runners, &res)
}

// phases runs what the benchmark measures, in order, into res: the
// memory of kube-annotator with no objects, then everything else for each
// shape of objects in turn, and last objects created with and without
// kube-annotator's admission policy.
func phases(ctx context.Context, b *rig.Bench, runners []*rig.Runner, res *results) error {
	if b.Opts.Owners > 0 {
		var err error
		res.owners, err = owners.Measure(ctx, b, runners)
		return err
	}
	ka := runners[slices.IndexFunc(runners, func(r *rig.Runner) bool { return r.Name == rig.KARunner })]
	if err := b.CreateNamespaces(ctx); err != nil {
		return err
	}
	progress.Logf("Measuring kube-annotator's memory with no objects")
	var err error
	if res.base, err = memory.Measure(ctx, b, ka, memory.Options{}); err != nil {
		return err
	}
	for i, sh := range b.Opts.Shapes() {
		if i > 0 {
			if err := b.DeleteSeeded(ctx); err != nil {
				return err
			}
		}
		b.Shape = sh
		sr := &shapeResults{shape: sh.Name}
		res.shapes = append(res.shapes, sr)
		latency := 0
		if i == 0 {
			latency = b.Opts.Latency
		}
		phase := func() error { return shapePhases(ctx, b, runners, ka, sr, latency) }
		if b.Opts.Shards > 0 {
			phase = func() (err error) {
				sr.shards, err = sharding.Measure(ctx, b, ka)
				return err
			}
		}
		if err := phase(); err != nil {
			return fmt.Errorf("%s objects: %w", sh.Name, err)
		}
		res.latency = append(res.latency, sr.latency...)
	}
	if b.Opts.Latency == 0 {
		return nil
	}
	res.admission, err = policy.Measure(ctx, b, ka, b.Opts.Latency)
	return err
}

// shapePhases measures with objects of the current shape: the rounds at
// --objects, then kube-annotator's memory there and at each
// --memory-objects, with latency objects' latency at the first and the
// time a rebuild of its caches takes at the last.
func shapePhases(ctx context.Context, b *rig.Bench, runners []*rig.Runner, ka *rig.Runner, sr *shapeResults, latency int) error {
	if err := b.Seed(ctx, b.Opts.Objects); err != nil {
		return err
	}
	for round := 1; round <= b.Opts.Rounds; round++ {
		for _, r := range runners {
			if !b.Opts.Measured(r.Name) {
				continue
			}
			run, err := rounds.Measure(ctx, b, r, round)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, r.Name, err)
			}
			sr.runs = append(sr.runs, run)
		}
	}
	counts := append([]int{b.Opts.Objects}, b.Opts.MemoryObjects...)
	for i, n := range counts {
		if n > b.Objects {
			if err := b.Seed(ctx, n); err != nil {
				return err
			}
		}
		if b.Opts.Rounds == 0 || i > 0 {
			progress.Logf("Converging the %s objects with kube-annotator, then measuring its memory at %d objects", b.Shape.Name, n)
			converge, err := memory.Idle(ctx, b, ka, fmt.Sprintf("%s-%d-objects-converge", b.Shape.Name, n), memory.IdleOptions{Env: b.MemoryEnv()})
			if err != nil {
				return err
			}
			progress.Logf("kube-annotator converged %d objects with peak RSS %.1f MiB%s", n, float64(converge.PeakRSS)/1024, b.MemLimitNote(converge.PeakRSS))
		} else {
			progress.Logf("Measuring kube-annotator's memory at %d %s objects", n, b.Shape.Name)
		}
		opts := memory.Options{Rebuild: i == len(counts)-1}
		if i == 0 {
			opts.Latency = latency
		}
		point, err := memory.Measure(ctx, b, ka, opts)
		if err != nil {
			return err
		}
		sr.memory = append(sr.memory, point)
		sr.latency = append(sr.latency, point.Latency...)
		if i == len(counts)-1 {
			if sr.when, err = memory.MeasureWhen(ctx, b, ka, point); err != nil {
				return err
			}
		}
	}
	return nil
}

// results is what the benchmark measured.
type results struct {
	// base is kube-annotator's memory with no objects.
	base    memory.Point
	shapes  []*shapeResults
	latency []time.Duration
	// admission are objects created without and with kube-annotator's
	// admission policy.
	admission []policy.Run
	// owners is what --owners measured, nil without it.
	owners *owners.Result
}

// shapeResults is what the benchmark measured with one shape of objects.
type shapeResults struct {
	shape   string
	runs    rounds.Runs
	memory  []memory.Point
	latency []time.Duration
	// shards is what --shards measured, nil without it.
	shards *sharding.Results
	// when is the memory with a when: condition on Deployments, nil
	// with --shards.
	when *memory.WhenPoint
}

// print writes the results as markdown tables: for each shape of objects,
// medians per runner, every run, kube-annotator's memory and the rebuild
// of its caches; then its latency, and its latency and writes with and
// without its admission policy.
func (r results) print(w io.Writer, o rig.Options) {
	for _, s := range r.shapes {
		if len(s.runs) > 0 {
			s.runs.Print(w, s.shape, o)
			s.runs.PrintTargets(w, s.shape, r.base.RestRSS())
		}
		if len(s.memory) > 0 {
			memory.Print(w, s.shape, r.base, s.memory, o)
		}
		if s.when != nil {
			s.when.Print(w, s.shape)
		}
		if s.shards != nil {
			s.shards.Print(w, s.shape)
		}
	}
	if len(r.latency) > 0 {
		objects := 0
		if len(r.shapes) > 0 && len(r.shapes[0].memory) > 0 {
			objects = r.shapes[0].memory[0].Objects
		}
		memory.PrintLatency(w, r.latency, objects)
	}
	if len(r.admission) > 0 {
		policy.Print(w, r.admission)
	}
	if r.owners != nil {
		r.owners.Print(w, o)
	}
}
