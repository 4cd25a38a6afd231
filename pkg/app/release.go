package app

import (
	"context"
	"runtime/debug"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// A burst of syncs (the first convergence of a cluster's objects, the
// initial lists of a start, a reload that changes them all) leaves the
// heap grown by its garbage, and with no allocation at rest nothing
// collects it: the process would keep the burst's RSS until the next one.
// Once the syncs fall back to a trickle after a burst of at least
// releaseAfterSyncs, the garbage is collected and the memory the heap no
// longer uses returned to the operating system, once. It sets neither GOGC
// nor the soft memory limit (gc.go).
const (
	// releaseEvery is how often the syncs are counted.
	releaseEvery = 10 * time.Second
	// releaseAfterSyncs is the least burst whose end frees memory: smaller
	// ones leave too little garbage to be worth a forced collection, which
	// costs a full mark of the live heap.
	releaseAfterSyncs = 1000
	// quietSyncs is the most syncs in releaseEvery, and keys queued, that
	// count as quiet: a cluster's churn goes on after a burst.
	quietSyncs = 100
)

// releaser tells, from the controller's activity read every releaseEvery,
// when a burst has ended.
type releaser struct {
	last  uint64 // syncs at the last step
	burst uint64 // syncs of the busy steps since the last quiet one
}

// step takes the syncs done since the start and the keys queued now, and
// reports whether a burst of at least releaseAfterSyncs has just ended: a
// step that is quiet after busy ones that synced that many.
func (r *releaser) step(syncs uint64, queued int) bool {
	n := syncs - r.last
	r.last = syncs
	if n > quietSyncs || queued > quietSyncs {
		r.burst += n
		return false
	}
	ended := r.burst >= releaseAfterSyncs
	r.burst = 0
	return ended
}

// releaseAfterBursts returns to the operating system, after each burst of
// syncs that activity reports, the memory the burst's garbage took, until
// ctx ends.
func releaseAfterBursts(ctx context.Context, activity func() (uint64, int)) {
	var r releaser
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if r.step(activity()) {
			start := time.Now()
			debug.FreeOSMemory()
			klog.FromContext(ctx).V(2).Info("Returned the memory of a burst of syncs to the operating system", "took", time.Since(start))
		}
	}, releaseEvery)
}
