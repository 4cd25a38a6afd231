package policy

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/table"
)

func (r Run) label() string {
	if r.policy {
		return "with --admission-policies"
	}
	return "without admission policy"
}

// latencies returns the create→annotated latencies and the create
// requests' own, each sorted.
func (r Run) latencies() (annotated, request []time.Duration) {
	for _, c := range r.created {
		annotated = append(annotated, c.Latency)
		request = append(request, c.Request)
	}
	slices.Sort(annotated)
	slices.Sort(request)
	return annotated, request
}

func (r Run) inResponse() int {
	n := 0
	for _, c := range r.created {
		if c.InResponse {
			n++
		}
	}
	return n
}

// Print writes the runs as a markdown table, and what the policy adds to
// the create request.
func Print(w io.Writer, runs []Run) {
	fmt.Fprint(w, "\n## Annotating at creation: kube-annotator without and with its admission policy\n\n")
	fmt.Fprintln(w, "| kube-annotator | objects created one at a time | other objects cached | annotated in the create response | create→annotated p50 (ms) | p99 (ms) | max (ms) | PATCH per object | create request p50 (ms) | create request p99 (ms) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var p50, p99 []time.Duration
	for _, r := range runs {
		lat, req := r.latencies()
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | %s | %.2f | %s | %s |\n", r.label(), len(r.created), r.objects, r.inResponse(),
			table.MS(table.Percentile(lat, 0.50)), table.MS(table.Percentile(lat, 0.99)), table.MS(lat[len(lat)-1]), float64(r.patches)/float64(len(r.created)),
			table.MS(table.Percentile(req, 0.50)), table.MS(table.Percentile(req, 0.99)))
		p50, p99 = append(p50, table.Percentile(req, 0.50)), append(p99, table.Percentile(req, 0.99))
	}
	if len(runs) == 2 {
		fmt.Fprintf(w, "\nWhat the policy adds to the create request: %s ms at p50, %s ms at p99.\n", table.SignedMS(p50[1]-p50[0]), table.SignedMS(p99[1]-p99[0]))
	}
	fmt.Fprint(w, `
Deployments, ReplicaSets, Pods and Frigates in turn, each created once the previous one was seen annotated, while a
fresh kube-annotator ran: first without, then with --admission-policies (measured once its policy took effect).
create→annotated: from the create request's return until the benchmark's watch saw the annotation; 0 when the create
response carried it. PATCH: requests the API server served on the four resources from the first create until 2s after
the last, per object created. Create request: from the request's start until its response, at the client.
`)
}
