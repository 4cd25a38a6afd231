package owners

import (
	"context"
	"fmt"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
)

// measureMemory measures kube-annotator's heap, with GOGC=rig.LiveGOGC,
// once converged: reading team from owners, then from the Pods
// themselves (no owner cached), then, after b.Opts.OwnersCached more
// Deployments with no replicas (and their ReplicaSets), from owners again.
func measureMemory(ctx context.Context, b *rig.Bench, w *podWatch, fromOwner, noOwner *rig.Runner, res *Result) error {
	for _, step := range []struct {
		r     *rig.Runner
		idle  int
		label string
	}{
		{fromOwner, 0, "fromOwner"},
		{noOwner, 0, "no owner read"},
		{fromOwner, b.Opts.OwnersCached, "fromOwner"},
	} {
		if step.idle > 0 {
			if err := createIdle(ctx, b, step.idle); err != nil {
				return err
			}
		}
		point, err := idleHeap(ctx, b, w, step.r, step.label, res.Pods)
		if err != nil {
			return err
		}
		res.Memory = append(res.Memory, point)
	}
	return nil
}

// idleHeap starts r with GOGC=rig.LiveGOGC, waits until Target's Pods
// carry team b, every other Pod a (bare Pods the default), and measures
// its heap at rest.
func idleHeap(ctx context.Context, b *rig.Bench, w *podWatch, r *rig.Runner, label string, pods int) (MemoryPoint, error) {
	p := MemoryPoint{Rules: label}
	var err error
	if p.Owners, err = countOwners(ctx, b); err != nil {
		return p, err
	}
	progress.Logf("Measuring kube-annotator's heap (%s) with %d Pods and %d Deployments and ReplicaSets", label, pods, p.Owners)
	env := append(b.MemoryEnv(), fmt.Sprintf("GOGC=%d", rig.LiveGOGC))
	c, err := start(ctx, b, r, fmt.Sprintf("memory-%s-%d", r.Name, p.Owners), env)
	if err != nil {
		return p, err
	}
	defer func() { _ = c.Stop() }()
	p.Synced = time.Since(c.Started)
	if _, err := w.waitFor(ctx, "converging", b.Opts.Timeout, converged(pods, "b", "a"), c.Alive); err != nil {
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
