package main

import (
	"context"
	"fmt"
	"io"
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
func (b *bench) serverNow(ctx context.Context) (serverState, error) {
	pid, err := b.env.APIServerPID()
	if err != nil {
		return serverState{}, err
	}
	s := serverState{rss: vmRSSKiB(pid), hwm: vmHWMKiB(pid)}
	for _, name := range resourceNames() {
		n, err := b.env.ServerMetric(ctx, "apiserver_longrunning_requests", map[string]string{"verb": "WATCH", "resource": name})
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
func (r *shardResults) printScale(w io.Writer, shape string) {
	fmt.Fprintf(w, "\n### Sizing, %d %s objects\n\n", r.objects, shape)
	fmt.Fprintln(w, "| setup | round | converge (s) | objects/s | PATCH per object | peak RSS per replica (MiB) | RSS at rest per replica (MiB) | kube-apiserver CPU (s) | kube-apiserver CPU per 10k objects (s) | kube-apiserver RSS (MiB) | kube-apiserver peak RSS (MiB) | etcd CPU (s) | watches open |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, run := range r.runs {
		fmt.Fprintf(w, "| %s | %d | %.1f | %.0f | %.3f | %s | %s | %.1f | %.2f | %s | %s | %.1f | %.0f |\n", run.setup, run.round,
			run.converge.Seconds(), run.objectsPerSecond(), float64(run.run.patch)/float64(run.objects),
			joinedKiB(run.peakRSS), joinedKiB(run.restRSS), run.control.apiServer, run.control.apiServer/float64(run.objects)*10000,
			mib(run.server.rss), mib(run.server.hwm), run.control.etcd, run.server.watches)
	}
	fmt.Fprintf(w, `
RSS at rest: each replica's, %v after every object was annotated. kube-apiserver RSS: then; its peak: since it started
(the seeding and earlier runs included). Watches open: WATCH requests open then on the four resources
(apiserver_longrunning_requests), the benchmark's own four among them.
`, settle)
}
