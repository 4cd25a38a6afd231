package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// requestCounts are requests the API server served on the four resources.
type requestCounts struct {
	patch, get, list, watch int
	// writes are every write verb: POST, PUT, PATCH, DELETE, DELETECOLLECTION.
	writes int
	// other are the requests on every other resource, by verb and
	// resource, for the log.
	other string
}

// runResult is one run of one runner.
type runResult struct {
	runner string
	round  int
	// first is from the process's start until the benchmark's watch saw
	// the first object annotated, converge until it saw every object
	// annotated.
	first, converge time.Duration
	objects         int
	// run are the requests from the start until every object was annotated.
	run requestCounts
	// steady are the requests in steady state, restart those after a
	// restart; nil for runners that exit when done.
	steady, restart *requestCounts
	// peakRSS is the process's peak RSS in KiB, restartRSS that of the
	// restarted process; restRSS is its RSS at the end of steady state
	// (controllers only).
	peakRSS, restartRSS, restRSS int64
	// cpu is the CPU time, user and system, in seconds, the process used
	// from its start until every object was annotated.
	cpu float64
	// control is the CPU time kube-apiserver and etcd used over the same
	// time: from just before the process's start until every object was
	// annotated.
	control cpuTimes
}

func (r runResult) objectsPerSecond() float64 {
	return float64(r.objects) / r.converge.Seconds()
}

// settle is how long the run's requests are still counted after the watch
// saw the last object annotated: the API server counts a request once it
// has written the response, which can come after the watch event.
const settle = 2 * time.Second

// measure resets the objects, then runs r until every object is
// annotated; a controller then runs for --steady of steady state, is
// restarted and runs for --steady again, and is stopped.
func (b *bench) measure(ctx context.Context, r *runner, round int) (runResult, error) {
	res := runResult{runner: r.name, round: round, objects: b.objects}
	if err := b.reset(ctx); err != nil {
		return res, err
	}
	w, err := b.openWindow(ctx)
	if err != nil {
		return res, err
	}
	before, err := b.controlPlaneCPU(ctx)
	if err != nil {
		return res, err
	}
	logf("Round %d: starting %s", round, r.name)
	prof := b.startProfile(ctx, fmt.Sprintf("%s-%s-%d", b.shape.name, r.name, round))
	c, err := b.start(r, fmt.Sprint(round), nil)
	if err != nil {
		return res, err
	}
	defer func() { _ = c.stop() }() // in case of an error; stopping twice is fine
	alive := c.failed
	if r.controller {
		alive = c.alive
	}
	if err := b.tracker.waitFor(ctx, r.name, b.opts.timeout, b.tracker.is(b.objects, b.objects), alive); err != nil {
		return res, err
	}
	first, last := b.tracker.span()
	res.first, res.converge = first.Sub(c.started), last.Sub(c.started)
	if r.controller {
		res.cpu = c.cpu()
	}
	after, err := b.controlPlaneCPU(ctx)
	if err != nil {
		return res, err
	}
	res.control = after.sub(before)
	if err := sleep(ctx, settle); err != nil {
		return res, err
	}
	if res.run, err = w.close(ctx); err != nil {
		return res, err
	}
	logf("%s: first object annotated %.1fs after its start, every object after %.1fs (%.0f objects/s); %d PATCH, %d GET, %d LIST, %d WATCH; kube-apiserver's CPU %.1fs, etcd's %.1fs",
		r.name, res.first.Seconds(), res.converge.Seconds(), res.objectsPerSecond(), res.run.patch, res.run.get, res.run.list, res.run.watch,
		res.control.apiServer, res.control.etcd)
	if len(res.run.other) > 0 {
		logf("  other requests: %s", res.run.other)
	}
	if err := prof.wait(); err != nil {
		return res, err
	}

	if !r.controller {
		if err := c.wait(stopTimeout); err != nil {
			return res, err
		}
		res.peakRSS, res.cpu = c.peakRSS(), c.cpu()
		return res, nil
	}
	if res.steady, err = b.hold(ctx, c, "steady state"); err != nil {
		return res, err
	}
	res.restRSS = c.rss()
	if err := c.stop(); err != nil {
		return res, err
	}
	res.peakRSS = c.peakRSS()

	w, err = b.openWindow(ctx)
	if err != nil {
		return res, err
	}
	restarted, err := b.start(r, fmt.Sprintf("%d-restart", round), nil)
	if err != nil {
		return res, err
	}
	defer func() { _ = restarted.stop() }()
	if res.restart, err = b.holdWindow(ctx, restarted, w, "after a restart"); err != nil {
		return res, err
	}
	if err := restarted.stop(); err != nil {
		return res, err
	}
	res.restartRSS = restarted.peakRSS()
	return res, nil
}

// hold lets c run for --steady and returns the requests served meanwhile.
func (b *bench) hold(ctx context.Context, c *child, what string) (*requestCounts, error) {
	w, err := b.openWindow(ctx)
	if err != nil {
		return nil, err
	}
	return b.holdWindow(ctx, c, w, what)
}

// holdWindow lets c run for --steady and closes w.
func (b *bench) holdWindow(ctx context.Context, c *child, w *window, what string) (*requestCounts, error) {
	deadline := time.Now().Add(b.opts.steady)
	for time.Now().Before(deadline) {
		if err := c.alive(); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if err := sleep(ctx, min(100*time.Millisecond, time.Until(deadline))); err != nil {
			return nil, err
		}
	}
	counts, err := w.close(ctx)
	if err != nil {
		return nil, err
	}
	logf("%s %s: %d writes in %v (%d GET, %d LIST)", c.Name, what, counts.writes, b.opts.steady, counts.get, counts.list)
	if counts.writes > 0 {
		logf("  WARNING: %s wrote to objects that were all annotated already", c.Name)
	}
	return &counts, nil
}

// window counts the requests the API server serves on the four resources
// between openWindow and close, less the benchmark's own: its watch only
// watches once synced, but would it list again, that is not counted.
type window struct {
	b                         *bench
	before                    h.Requests
	ownGet, ownList, ownWatch int
}

func (b *bench) openWindow(ctx context.Context) (*window, error) {
	before, err := b.env.APIRequests(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the API server's request counts: %w", err)
	}
	own := b.tracker.requests
	return &window{b: b, before: before, ownGet: own.Count("get", ""), ownList: own.Count("list", ""), ownWatch: own.Count("watch", "")}, nil
}

func (w *window) close(ctx context.Context) (requestCounts, error) {
	after, err := w.b.env.APIRequests(ctx)
	if err != nil {
		return requestCounts{}, fmt.Errorf("read the API server's request counts: %w", err)
	}
	d := after.Sub(w.before)
	names := resourceNames()
	ownGet := w.b.tracker.requests.Count("get", "") - w.ownGet
	ownList := w.b.tracker.requests.Count("list", "") - w.ownList
	ownWatch := w.b.tracker.requests.Count("watch", "") - w.ownWatch
	if ownGet+ownList+ownWatch > 0 {
		logf("  (not counting the benchmark's own %d GET, %d LIST and %d WATCH)", ownGet, ownList, ownWatch)
	}
	return requestCounts{
		patch:  d.Count("PATCH", names...),
		get:    d.Count("GET", names...) - ownGet,
		list:   d.Count("LIST", names...) - ownList,
		watch:  d.Count("WATCH", names...) - ownWatch,
		writes: d.Writes(names...),
		other:  otherRequests(d, names),
	}, nil
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// otherRequests lists the requests of d on resources other than names,
// e.g. "2 GET configmaps, 1 LIST namespaces", in a stable order.
func otherRequests(d h.Requests, names []string) string {
	var parts []string
	for k, v := range d {
		if v > 0 && !slices.Contains(names, k.Resource) {
			parts = append(parts, fmt.Sprintf("%.0f %s %s", v, k.Verb, cmp.Or(k.Resource, "(none)")))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
