package sharding

import (
	"context"
	"fmt"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
)

// reshardRun is one run of a shard group that grows by one replica and
// shrinks back while it converges.
type reshardRun struct {
	round, objects int
	// from is the replicas the group starts with.
	from int
	// grown and shrunk are the objects annotated when the extra replica
	// was started, and when the first one was stopped once the extra one
	// was ready; grownAt and shrunkAt when, since the first start.
	grown, shrunk     int
	grownAt, shrunkAt time.Duration
	converge          time.Duration
	run               rig.RequestCounts
	// annotated is the objects a fresh list from the API server showed
	// annotated at the end.
	annotated int
	// reshards are the informer rebuilds of the replicas left at the end,
	// cached their cached objects then.
	reshards float64
	cached   []float64
}

// patchesPerObject is PATCH requests per object, 1 when each object was
// written once.
func (r reshardRun) patchesPerObject() float64 { return float64(r.run.Patch) / float64(r.objects) }

// groupSettle is how long writes are still counted after every object was
// annotated while a group changed: a replica narrows its ranges only after
// the new owner announced them, within a renew period (kube-annotator's
// default --shard-renew-period is 2s).
const groupSettle = rig.Settle + 2*time.Second

// reshard resets the objects and starts a shard group of --shards
// replicas; once a quarter of the objects are annotated it starts one
// more, and once that one is ready it stops (SIGTERM) the first. It
// counts the requests until every object is annotated and groupSettle
// after.
func reshard(ctx context.Context, b *rig.Bench, ka *rig.Runner, round int) (reshardRun, error) {
	n := b.Opts.Shards
	res := reshardRun{round: round, objects: b.Objects, from: n}
	if err := b.Reset(ctx); err != nil {
		return res, err
	}
	w, err := b.OpenWindow(ctx)
	if err != nil {
		return res, err
	}
	tag := fmt.Sprintf("reshard-round%d", round)
	s := shardSetup{id: "reshard", name: fmt.Sprintf("group of %d → %d → %d", n, n+1, n), replicas: n, group: true}
	progress.Logf("Round %d: starting a %s", round, s.name)
	rs, err := startReplicas(b, ka, s, tag, nil)
	if err != nil {
		return res, err
	}
	defer func() { _ = rs.stop() }() // in case of an error; stopping twice is fine
	start := rs[0].Started
	quarter := func(_, annotated int) bool { return annotated >= b.Objects/4 }
	if err := b.Tracker.WaitFor(ctx, "before growing", b.Opts.Timeout, quarter, rs.alive); err != nil {
		return res, err
	}
	_, res.grown = b.Tracker.Counts()
	res.grownAt = time.Since(start)
	extra, err := startReplica(b, ka, tag+"-extra", nil, s.args(n, tag)...)
	if err != nil {
		return res, err
	}
	rs = append(rs, extra)
	if err := child.WaitReady(ctx, extra.readyz, b.Opts.Timeout, rs.alive); err != nil {
		return res, fmt.Errorf("replica %d of %d: %w", n+1, n+1, err)
	}
	_, res.shrunk = b.Tracker.Counts()
	res.shrunkAt = time.Since(start)
	progress.Logf("  grew to %d replicas after %.1fs (%d annotated); the new one was ready after %.1fs (%d annotated): stopping the first",
		n+1, res.grownAt.Seconds(), res.grown, res.shrunkAt.Seconds(), res.shrunk)
	if err := rs[0].Stop(); err != nil {
		return res, fmt.Errorf("shrink: %w", err)
	}
	rs = rs[1:]
	return res, finishReshard(ctx, b, rs, w, start, &res)
}

// finishReshard waits until every object is annotated and groupSettle
// after, and records the rest of res.
func finishReshard(ctx context.Context, b *rig.Bench, rs replicas, w *rig.Window, start time.Time, res *reshardRun) error {
	if err := b.Tracker.WaitFor(ctx, "after shrinking", b.Opts.Timeout, b.Tracker.Is(b.Objects, b.Objects), rs.alive); err != nil {
		return err
	}
	_, last := b.Tracker.Span()
	res.converge = last.Sub(start)
	if err := progress.Sleep(ctx, groupSettle); err != nil {
		return err
	}
	var err error
	if res.run, err = w.Close(ctx); err != nil {
		return err
	}
	reshards, err := rs.metric(ctx, "kube_annotator_shard_reshards_total", nil)
	if err != nil {
		return err
	}
	res.reshards = table.Sum(reshards)
	if res.cached, err = rs.cached(ctx); err != nil {
		return err
	}
	annotated, err := b.AnnotatedObjects(ctx)
	if err != nil {
		return err
	}
	res.annotated = len(annotated)
	progress.Logf("Resharding: every object annotated after %.1fs; %d PATCH for %d objects (%.4f per object); %d annotated in a fresh list; %.0f informer rebuilds; cached %v",
		res.converge.Seconds(), res.run.Patch, res.objects, res.patchesPerObject(), res.annotated, res.reshards, res.cached)
	return rs.stop()
}
