package rig

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// RequestCounts are requests the API server served on the four resources.
type RequestCounts struct {
	Patch, Get, List, Watch int
	// Writes are every write verb: POST, PUT, PATCH, DELETE, DELETECOLLECTION.
	Writes int
	// Other are the requests on every other resource, by verb and
	// resource, for the log.
	Other string
}

// Settle is how long the run's requests are still counted after the watch
// saw the last object annotated: the API server counts a request once it
// has written the response, which can come after the watch event.
const Settle = 2 * time.Second

// Window counts the requests the API server serves on the four resources
// between OpenWindow and Close, less the benchmark's own: its watch only
// watches once synced, but would it list again, that is not counted.
type Window struct {
	b                         *Bench
	before                    h.Requests
	ownGet, ownList, ownWatch int
}

// OpenWindow starts counting the requests the API server serves on the
// four resources.
func (b *Bench) OpenWindow(ctx context.Context) (*Window, error) {
	before, err := b.Env.APIRequests(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the API server's request counts: %w", err)
	}
	own := b.Tracker.Requests
	return &Window{b: b, before: before, ownGet: own.Count("get", ""), ownList: own.Count("list", ""), ownWatch: own.Count("watch", "")}, nil
}

// Close returns the requests the API server served on the four
// resources since OpenWindow, less the benchmark's own.
func (w *Window) Close(ctx context.Context) (RequestCounts, error) {
	after, err := w.b.Env.APIRequests(ctx)
	if err != nil {
		return RequestCounts{}, fmt.Errorf("read the API server's request counts: %w", err)
	}
	d := after.Sub(w.before)
	names := workload.ResourceNames()
	ownGet := w.b.Tracker.Requests.Count("get", "") - w.ownGet
	ownList := w.b.Tracker.Requests.Count("list", "") - w.ownList
	ownWatch := w.b.Tracker.Requests.Count("watch", "") - w.ownWatch
	if ownGet+ownList+ownWatch > 0 {
		progress.Logf("  (not counting the benchmark's own %d GET, %d LIST and %d WATCH)", ownGet, ownList, ownWatch)
	}
	return RequestCounts{
		Patch:  d.Count("PATCH", names...),
		Get:    d.Count("GET", names...) - ownGet,
		List:   d.Count("LIST", names...) - ownList,
		Watch:  d.Count("WATCH", names...) - ownWatch,
		Writes: d.Writes(names...),
		Other:  otherRequests(d, names),
	}, nil
}

// otherRequests lists the requests of d on resources other than names,
// e.g. "2 GET configmaps, 1 LIST namespaces", in a stable order.
func otherRequests(d h.Requests, names []string) string {
	type series struct{ verb, resource string }
	sums := map[series]float64{}
	for k, v := range d {
		if v > 0 && !slices.Contains(names, k.Resource) {
			sums[series{k.Verb, cmp.Or(k.Resource, "(none)")}] += v
		}
	}
	var parts []string
	for k, v := range sums {
		parts = append(parts, fmt.Sprintf("%.0f %s %s", v, k.verb, k.resource))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
