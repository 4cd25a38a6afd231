package main

import (
	"context"
	"fmt"
	"time"
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
	run               requestCounts
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
func (r reshardRun) patchesPerObject() float64 { return float64(r.run.patch) / float64(r.objects) }

// groupSettle is how long writes are still counted after every object was
// annotated while a group changed: a replica narrows its ranges only after
// the new owner announced them, within a renew period (kube-annotator's
// default --shard-renew-period is 2s).
const groupSettle = settle + 2*time.Second

// reshard resets the objects and starts a shard group of --shards
// replicas; once a quarter of the objects are annotated it starts one
// more, and once that one is ready it stops (SIGTERM) the first. It
// counts the requests until every object is annotated and groupSettle
// after.
func (b *bench) reshard(ctx context.Context, ka *runner, round int) (reshardRun, error) {
	n := b.opts.shards
	res := reshardRun{round: round, objects: b.objects, from: n}
	if err := b.reset(ctx); err != nil {
		return res, err
	}
	w, err := b.openWindow(ctx)
	if err != nil {
		return res, err
	}
	tag := fmt.Sprintf("reshard-round%d", round)
	s := shardSetup{id: "reshard", name: fmt.Sprintf("group of %d → %d → %d", n, n+1, n), replicas: n, group: true}
	logf("Round %d: starting a %s", round, s.name)
	rs, err := b.startReplicas(ka, s, tag, nil)
	if err != nil {
		return res, err
	}
	defer func() { _ = rs.stop() }() // in case of an error; stopping twice is fine
	start := rs[0].started
	quarter := func(_, annotated int) bool { return annotated >= b.objects/4 }
	if err := b.tracker.waitFor(ctx, "before growing", b.opts.timeout, quarter, rs.alive); err != nil {
		return res, err
	}
	_, res.grown = b.tracker.counts()
	res.grownAt = time.Since(start)
	extra, err := b.startReplica(ka, tag+"-extra", nil, s.args(n, tag)...)
	if err != nil {
		return res, err
	}
	rs = append(rs, extra)
	if err := waitReady(ctx, extra.readyz, b.opts.timeout, rs.alive); err != nil {
		return res, fmt.Errorf("replica %d of %d: %w", n+1, n+1, err)
	}
	_, res.shrunk = b.tracker.counts()
	res.shrunkAt = time.Since(start)
	logf("  grew to %d replicas after %.1fs (%d annotated); the new one was ready after %.1fs (%d annotated): stopping the first",
		n+1, res.grownAt.Seconds(), res.grown, res.shrunkAt.Seconds(), res.shrunk)
	if err := rs[0].stop(); err != nil {
		return res, fmt.Errorf("shrink: %w", err)
	}
	rs = rs[1:]
	return res, b.finishReshard(ctx, rs, w, start, &res)
}

// finishReshard waits until every object is annotated and groupSettle
// after, and records the rest of res.
func (b *bench) finishReshard(ctx context.Context, rs replicas, w *window, start time.Time, res *reshardRun) error {
	if err := b.tracker.waitFor(ctx, "after shrinking", b.opts.timeout, b.tracker.is(b.objects, b.objects), rs.alive); err != nil {
		return err
	}
	_, last := b.tracker.span()
	res.converge = last.Sub(start)
	if err := sleep(ctx, groupSettle); err != nil {
		return err
	}
	var err error
	if res.run, err = w.close(ctx); err != nil {
		return err
	}
	reshards, err := rs.metric(ctx, "kube_annotator_shard_reshards_total", nil)
	if err != nil {
		return err
	}
	res.reshards = sum(reshards)
	if res.cached, err = rs.cached(ctx); err != nil {
		return err
	}
	annotated, err := b.annotatedObjects(ctx)
	if err != nil {
		return err
	}
	res.annotated = len(annotated)
	logf("Resharding: every object annotated after %.1fs; %d PATCH for %d objects (%.4f per object); %d annotated in a fresh list; %.0f informer rebuilds; cached %v",
		res.converge.Seconds(), res.run.patch, res.objects, res.patchesPerObject(), res.annotated, res.reshards, res.cached)
	return rs.stop()
}
