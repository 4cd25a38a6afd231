package memory

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// latency creates n Pods one at a time, each once the previous one was
// seen annotated, and returns for each the time from its create request's
// return to the benchmark's watch seeing it annotated. It deletes them
// before it returns.
func latency(ctx context.Context, b *rig.Bench, n int) ([]time.Duration, error) {
	progress.Logf("Measuring create→annotated latency of %d Pods created one at a time", n)
	var lat []time.Duration
	var created []workload.ObjectRef
	defer func() {
		if err := b.DeleteAll(ctx, created); err != nil {
			progress.Logf("  could not delete the latency Pods: %v", err)
		}
	}()
	for i := range n {
		ref := workload.ObjectRef{Resource: h.Pods, Namespace: workload.LatencyNamespace, Name: fmt.Sprintf("latency-%04d", i)}
		c, err := b.CreateAnnotated(ctx, ref, workload.Pod(ref.Namespace, ref.Name), &created)
		if err != nil {
			return nil, err
		}
		lat = append(lat, c.Latency)
	}
	return lat, nil
}

// PrintLatency writes the create→annotated latencies as a markdown table,
// with the objects kube-annotator had cached meanwhile.
func PrintLatency(w io.Writer, latency []time.Duration, objects int) {
	lat := slices.Sorted(slices.Values(latency))
	fmt.Fprint(w, "\n## kube-annotator's create→annotated latency at idle\n\n")
	fmt.Fprintln(w, "| Pods created one at a time | other objects cached | p50 (ms) | p99 (ms) | max (ms) |")
	fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: |")
	fmt.Fprintf(w, "| %d | %d | %s | %s | %s |\n", len(lat), objects,
		table.MS(table.Percentile(lat, 0.50)), table.MS(table.Percentile(lat, 0.99)), table.MS(lat[len(lat)-1]))
	fmt.Fprintln(w, "\nFrom the create request's return until the benchmark's watch saw the annotation.")
}
