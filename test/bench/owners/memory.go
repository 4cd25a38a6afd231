package owners

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
)

// measureMemory measures kube-annotator's heap, with GOGC=rig.LiveGOGC,
// once converged: reading team from owners; then, after
// b.Opts.OwnersCached more Deployments with no replicas (and their
// ReplicaSets), from owners again; last with a literal annotation, which
// reads no owner (its own first writes done before the heap is sampled).
func measureMemory(ctx context.Context, b *rig.Bench, w *podWatch, fromOwner, noOwner *rig.Runner, res *Result) error {
	steps := []struct {
		r     *rig.Runner
		idle  int
		label string
	}{
		{fromOwner, 0, "fromOwner"},
		{fromOwner, b.Opts.OwnersCached, "fromOwner"},
		{noOwner, 0, "no owner read (a literal annotation)"},
	}
	if b.Opts.OwnersCached == 0 {
		steps = slices.Delete(steps, 1, 2)
	}
	for _, step := range steps {
		if step.idle > 0 {
			if err := createIdle(ctx, b, step.idle); err != nil {
				return err
			}
		}
		point, err := idleHeap(ctx, b, w, step.r, step.label, res.Pods, res.team, step.r == fromOwner)
		if err != nil {
			return err
		}
		res.Memory = append(res.Memory, point)
	}
	return nil
}

// idleHeap runs r until Target's Pods carry team, every other Pod a
// (bare Pods the default) and, unless r reads owners, every Pod its
// annotation; then starts it again, with GOGC=rig.LiveGOGC, and measures
// its heap at rest.
func idleHeap(ctx context.Context, b *rig.Bench, w *podWatch, r *rig.Runner, label string, pods int, team string, readsOwners bool) (MemoryPoint, error) {
	p := MemoryPoint{Rules: label, ReadsOwners: readsOwners}
	var err error
	if p.Owners, err = countOwners(ctx, b); err != nil {
		return p, err
	}
	done := converged(pods, team, "a")
	cond := func(c podCounts) bool { return done(c) && (readsOwners || c.annotated == c.all) }
	// A process that has just written holds what its writes left (its
	// expectations of their events, garbage no collection has freed yet):
	// one process converges, a fresh one is measured.
	progress.Logf("Converging with kube-annotator (%s), %d Deployments and ReplicaSets", label, p.Owners)
	c, err := start(ctx, b, r, fmt.Sprintf("converge-%s-%d", r.Name, p.Owners), b.MemoryEnv())
	if err != nil {
		return p, err
	}
	if _, err := w.waitFor(ctx, "converging", b.Opts.Timeout, cond, c.Alive); err != nil {
		_ = c.Stop()
		return p, err
	}
	if err := c.Stop(); err != nil {
		return p, err
	}
	progress.Logf("Measuring kube-annotator's heap (%s) with %d Pods and %d Deployments and ReplicaSets", label, pods, p.Owners)
	env := append(b.MemoryEnv(), fmt.Sprintf("GOGC=%d", rig.LiveGOGC))
	if c, err = start(ctx, b, r, fmt.Sprintf("memory-%s-%d", r.Name, p.Owners), env); err != nil {
		return p, err
	}
	defer func() { _ = c.Stop() }()
	p.Synced = time.Since(c.Started)
	if _, err := w.waitFor(ctx, "converged", b.Opts.Timeout, cond, c.Alive); err != nil {
		return p, err
	}
	heap, err := child.MinHeap(ctx, c.metrics, b.Opts.MemoryWindow)
	if err != nil {
		return p, err
	}
	p.HeapInuse, p.HeapAlloc, p.RestRSS = heap.Inuse, heap.Alloc, c.RSS()
	progress.Logf("  heap in use %.1f MiB, objects %.1f MiB, RSS at rest %.1f MiB", p.HeapInuse/(1<<20), p.HeapAlloc/(1<<20), float64(p.RestRSS)/1024)
	return p, c.Stop()
}
