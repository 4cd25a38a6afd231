package sharding

import (
	"context"
	"fmt"
	"io"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
)

// serverState is what kube-apiserver holds once the replicas converged.
type serverState struct {
	// rss is its RSS then, hwm its peak RSS since it started, in KiB.
	rss, hwm int64
	// watches are the WATCH requests open on the four resources
	// (apiserver_longrunning_requests), the benchmark's own among them.
	watches float64
}

// serverNow reads kube-apiserver's memory from /proc and its open watches
// from its metrics.
func serverNow(ctx context.Context, b *rig.Bench) (serverState, error) {
	pid, err := b.Env.APIServerPID()
	if err != nil {
		return serverState{}, err
	}
	s := serverState{rss: child.VmRSSKiB(pid), hwm: child.VmHWMKiB(pid)}
	for _, name := range workload.ResourceNames() {
		n, err := b.Env.ServerMetric(ctx, "apiserver_longrunning_requests", map[string]string{"verb": "WATCH", "resource": name})
		if err != nil {
			return s, err
		}
		s.watches += n
	}
	return s, nil
}

// printScale prints, for each run, what sizing a cluster of that many
// objects needs: the replicas' memory, peak and at rest, and the API
// server's CPU, memory and watches.
func (r *Results) printScale(w io.Writer, shape string) {
	fmt.Fprintf(w, "\n### Sizing, %d %s objects\n\n", r.objects, shape)
	fmt.Fprintln(w, "| setup | round | converge (s) | objects/s | PATCH per object | peak RSS per replica (MiB) | RSS at rest per replica (MiB) | kube-apiserver CPU (s) | kube-apiserver CPU per 10k objects (s) | kube-apiserver RSS (MiB) | kube-apiserver peak RSS (MiB) | etcd CPU (s) | watches open |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, run := range r.runs {
		fmt.Fprintf(w, "| %s | %d | %.1f | %.0f | %.3f | %s | %s | %.1f | %.2f | %s | %s | %.1f | %.0f |\n", run.setup, run.round,
			run.converge.Seconds(), run.objectsPerSecond(), float64(run.run.Patch)/float64(run.objects),
			table.JoinedKiB(run.peakRSS), table.JoinedKiB(run.restRSS), run.control.APIServer, run.control.APIServer/float64(run.objects)*10000,
			table.MiB(run.server.rss), table.MiB(run.server.hwm), run.control.Etcd, run.server.watches)
	}
	fmt.Fprintf(w, `
RSS at rest: each replica's, %v after every object was annotated. kube-apiserver RSS: then; its peak: since it started
(the seeding and earlier runs included). Watches open: WATCH requests open then on the four resources
(apiserver_longrunning_requests), the benchmark's own four among them.
`, rig.Settle)
}
