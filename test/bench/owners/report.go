package owners

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
)

// Result is what the phase measured.
type Result struct {
	// Pods is the relabelled Deployment's replicas.
	Pods int
	// Initial is kube-annotator's first convergence: from its start until
	// every Pod carried its owner's team.
	Initial Run
	// Relabel is kube-annotator relabelling the Deployment's Pods, Raw
	// the raw PATCH loop relabelling the same Pods, one Run per round.
	Relabel, Raw []Run
	// Control is the number of control Pods, ControlWritten those whose
	// resourceVersion changed while the Deployment was relabelled, in
	// every round.
	Control        int
	ControlWritten []string
	// Memory is kube-annotator's heap, converged: reading owners, reading
	// none, reading owners with more owners cached.
	Memory []MemoryPoint
	// team is the Deployment's team now.
	team string
}

// Run is one way of relabelling the Pods, measured.
type Run struct {
	Name  string
	Round int
	// Took is from the relabel (the Deployment's, or the raw loop's
	// start) until the phase's watch saw the last Pod relabelled.
	Took time.Duration
	// Patches are the PATCH requests the API server served on Pods,
	// Writes every write request on Pods, whoever sent them.
	Patches, Writes int
	// CPU is the runner's CPU seconds, user and system, over Took.
	CPU float64
	// Others is what the control plane used meanwhile, until 2s after.
	Others OthersCPU
}

// OthersCPU are the CPU seconds of the processes that serve a runner, or
// react to its writes.
type OthersCPU struct {
	ControlPlane      rig.CPUTimes
	ControllerManager float64
}

// Rate is Pods relabelled per second, 0 if nothing was measured.
func (r Run) Rate(pods int) float64 {
	if r.Took <= 0 {
		return 0
	}
	return float64(pods) / r.Took.Seconds()
}

// MemoryPoint is kube-annotator's memory, converged, with GOGC=rig.LiveGOGC.
type MemoryPoint struct {
	Rules       string
	ReadsOwners bool
	// Owners are the Deployments and ReplicaSets in the cluster.
	Owners int
	Synced time.Duration
	// HeapInuse and HeapAlloc are the lowest go_memstats_heap_inuse_bytes
	// and go_memstats_heap_alloc_bytes sampled, in bytes.
	HeapInuse, HeapAlloc float64
	// RestRSS is the RSS at the end of the sampling, KiB.
	RestRSS int64
}

// Holds reports whether every relabel sent exactly one PATCH per Pod of
// the Deployment, and no other write on Pods, and wrote no control Pod;
// false if none was measured.
func (r *Result) Holds() bool {
	for _, run := range r.Relabel {
		if run.Patches != r.Pods || run.Writes != r.Pods {
			return false
		}
	}
	return len(r.Relabel) > 0 && len(r.ControlWritten) == 0
}

// median returns the run whose figures are each the median of runs' (a
// Run of medians), and false when there are none.
func median(runs []Run) (Run, bool) {
	if len(runs) == 0 {
		return Run{}, false
	}
	pick := func(f func(Run) float64) float64 {
		vs := make([]float64, len(runs))
		for i, run := range runs {
			vs[i] = f(run)
		}
		return *table.Median(vs)
	}
	return Run{
		Name:    runs[0].Name,
		Took:    time.Duration(pick(func(r Run) float64 { return float64(r.Took) })),
		Patches: int(pick(func(r Run) float64 { return float64(r.Patches) })),
		Writes:  int(pick(func(r Run) float64 { return float64(r.Writes) })),
		CPU:     pick(func(r Run) float64 { return r.CPU }),
		Others: OthersCPU{
			ControlPlane: rig.CPUTimes{
				APIServer: pick(func(r Run) float64 { return r.Others.ControlPlane.APIServer }),
				Etcd:      pick(func(r Run) float64 { return r.Others.ControlPlane.Etcd }),
			},
			ControllerManager: pick(func(r Run) float64 { return r.Others.ControllerManager }),
		},
	}, true
}

// PerOwner is the heap in use, and of it the objects, per owner cached,
// in bytes, between the first and the last memory points that read
// owners; ok false unless there are two with different owner counts.
func (r *Result) PerOwner() (heap, alloc float64, ok bool) {
	var reading []MemoryPoint
	for _, p := range r.Memory {
		if p.ReadsOwners {
			reading = append(reading, p)
		}
	}
	if len(reading) < 2 {
		return 0, 0, false
	}
	first, last := reading[0], reading[len(reading)-1]
	n := float64(last.Owners - first.Owners)
	if n <= 0 {
		return 0, 0, false
	}
	return (last.HeapInuse - first.HeapInuse) / n, (last.HeapAlloc - first.HeapAlloc) / n, true
}

// OwnerInformers is the heap in use of the first memory point that reads
// owners less that of the first that reads none, in bytes; ok false
// unless both were measured.
func (r *Result) OwnerInformers() (heap float64, owners int, ok bool) {
	i := slices.IndexFunc(r.Memory, func(p MemoryPoint) bool { return p.ReadsOwners })
	j := slices.IndexFunc(r.Memory, func(p MemoryPoint) bool { return !p.ReadsOwners })
	if i < 0 || j < 0 {
		return 0, 0, false
	}
	return r.Memory[i].HeapInuse - r.Memory[j].HeapInuse, r.Memory[i].Owners, true
}

// Print writes the result as markdown tables.
func (r *Result) Print(w io.Writer, o rig.Options) {
	fmt.Fprintf(w, "\n## Relabelling one Deployment of %d Pods: values read from owners\n\n", r.Pods)
	fmt.Fprintln(w, "| runner | round | Pods | took (s) | Pods/s | ÷ raw | PATCH on pods | writes on pods | CPU (s) | CPU ÷ raw | kube-apiserver CPU (s) | etcd CPU (s) | kube-controller-manager CPU (s) |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	row := func(run, raw Run, round string) {
		rate, rawRate, cpu, rawCPU := run.Rate(r.Pods), raw.Rate(r.Pods), run.CPU, raw.CPU
		fmt.Fprintf(w, "| %s | %s | %d | %.2f | %.0f | %s | %d | %d | %.2f | %s | %.2f | %.2f | %.2f |\n", run.Name, round, r.Pods, run.Took.Seconds(), rate,
			table.Ratio(&rate, &rawRate), run.Patches, run.Writes, cpu, table.Ratio(&cpu, &rawCPU),
			run.Others.ControlPlane.APIServer, run.Others.ControlPlane.Etcd, run.Others.ControllerManager)
	}
	ka, kaOK := median(r.Relabel)
	raw, rawOK := median(r.Raw)
	if kaOK && rawOK {
		row(ka, raw, "median")
		row(raw, raw, "median")
	}
	for i, run := range r.Relabel {
		if i < len(r.Raw) {
			row(run, r.Raw[i], fmt.Sprint(run.Round))
			row(r.Raw[i], r.Raw[i], fmt.Sprint(run.Round))
		}
	}
	written := "none"
	if len(r.ControlWritten) > 0 {
		written = strings.Join(r.ControlWritten, ", ")
	}
	fmt.Fprintf(w, `
One PATCH per Pod of the Deployment and no write elsewhere, in every round: %s (control Pods written: %s, of %d).
kube-annotator: from the Deployment's relabel (its team changed) until the benchmark's watch saw the last Pod
relabelled; raw: this program's raw loop through the metadata client (one list of the Deployment's Pods by its
selector, a merge patch each, %d workers), from its start until the same. Median rows: the median of each column, and
their ratio; the other rows: each round's, ÷ that round's raw loop. PATCH and writes on pods: the API server's own
counts (apiserver_request_total), whoever sent them. CPU: the runner's user and system seconds over the same time; the
control plane's and kube-controller-manager's (whose ReplicaSet controller syncs on each Pod's update) until 2 s after.
kube-annotator first labelled every Pod in %.1f s from its start (%d PATCH on pods).
`, table.YesNo(r.Holds()), written, r.Control, o.Workers, r.Initial.Took.Seconds(), r.Initial.Patches)
	if len(r.Memory) == 0 {
		return
	}
	fmt.Fprintf(w, "\n| rules | Deployments and ReplicaSets | synced (s) | heap in use, GOGC=%d (MiB) | of which objects (MiB) | RSS at rest (MiB) |\n", rig.LiveGOGC)
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, p := range r.Memory {
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.1f | %s |\n", p.Rules, p.Owners, p.Synced.Seconds(), p.HeapInuse/(1<<20), p.HeapAlloc/(1<<20), table.MiB(p.RestRSS))
	}
	if heap, alloc, ok := r.PerOwner(); ok {
		fmt.Fprintf(w, "\nPer owner cached (last row less the first, by the Deployments and ReplicaSets added): %.0f bytes of heap in use, %.0f bytes of objects.\n", heap, alloc)
	}
	if d, owners, ok := r.OwnerInformers(); ok {
		fmt.Fprintf(w, "Reading owners at %d Pods and %d owners, against a literal annotation: %+.1f MiB of heap in use (the owner informers, and each Pod's controller reference cached).\n", r.Pods, owners, d/(1<<20))
	}
	fmt.Fprintf(w, "Fresh processes, each once every Pod carried its team; the lowest of the heap sampled every second over %v.\n", o.MemoryWindow)
}
