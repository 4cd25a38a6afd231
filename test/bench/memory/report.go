package memory

import (
	"fmt"
	"io"

	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
)

// projectedObjects is the object count kube-annotator's heap is projected
// to from the largest measured.
const projectedObjects = 1000000

// Print writes kube-annotator's memory, converged, at each of points, as
// a markdown table beside base, the memory with no objects, and the
// reloads that rebuilt its caches.
func Print(w io.Writer, shape string, base Point, points []Point, o rig.Options) {
	fmt.Fprintf(w, "\n## kube-annotator's memory, converged, %s objects\n\n", shape)
	fmt.Fprintf(w, "| objects | synced (s) | LIST | heap in use (MiB) | heap in use, GOGC=%d (MiB) | peak RSS (MiB) | RSS at rest (MiB) | heap per object, GOGC=%d (bytes) | of which objects (bytes) | peak RSS per object (bytes) |\n", rig.LiveGOGC, rig.LiveGOGC)
	fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var perObject float64
	for _, p := range append([]Point{base}, points...) {
		heapPer, allocPer, rssPer := "", "", ""
		if n := p.Objects - base.Objects; n > 0 {
			perObject = (p.liveHeap - base.liveHeap) / float64(n)
			heapPer = fmt.Sprintf("%.0f", perObject)
			allocPer = fmt.Sprintf("%.0f", (p.liveAlloc-base.liveAlloc)/float64(n))
			rssPer = fmt.Sprintf("%.0f", float64(p.peakRSS-base.peakRSS)*1024/float64(n))
		}
		fmt.Fprintf(w, "| %d | %.1f | %d | %.1f | %.1f | %s | %s | %s | %s | %s |\n", p.Objects, p.synced.Seconds(), p.startup.List, p.heapInuse/(1<<20), p.liveHeap/(1<<20),
			table.MiB(p.peakRSS), table.MiB(p.restRSS), heapPer, allocPer, rssPer)
	}
	fmt.Fprintf(w, `
Fresh processes started with every object already annotated. synced: from the process's start until its readiness
probe, which waits for every informer to sync, answered; LIST: lists the API server served meanwhile (the informers
stream their initial list with a WATCH unless they fall back to a LIST). Heap in use: the lowest go_memstats_heap_inuse_bytes sampled
over %v once converged; RSS at rest at the end of that. At rest nothing triggers a garbage collection, so with
kube-annotator's default GOGC (50) it holds up to half as much garbage from the sync as live data; a second process
with GOGC=%d holds at most about %d%% more than its live heap.
Per object: the difference to the first row, divided by the difference in objects; of which objects: the same of
go_memstats_heap_alloc_bytes, the objects alone, without the free slots of the spans that hold them.
Projected to %d objects at the last row's heap per object: %.0f MiB of live heap.
`, o.MemoryWindow, rig.LiveGOGC, rig.LiveGOGC, projectedObjects, (base.liveHeap+perObject*projectedObjects)/(1<<20))
	for _, p := range points {
		if rb := p.rebuild; rb != nil {
			fmt.Fprintf(w, "\nA reload whose rules make the caches keep one more label, which no object carries, at %d objects: "+
				"every object was synced again %.1f s after the rules file was written (%d LIST, %d WATCH, %d writes).\n",
				rb.objects, rb.took.Seconds(), rb.requests.List, rb.requests.Watch, rb.requests.Writes)
		}
	}
}
