package rounds

import (
	"context"
	"fmt"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
)

// Result is one run of one runner.
type Result struct {
	runner string
	round  int
	// first is from the process's start until the benchmark's watch saw
	// the first object annotated, converge until it saw every object
	// annotated.
	first, converge time.Duration
	objects         int
	// run are the requests from the start until every object was annotated.
	run rig.RequestCounts
	// steady are the requests in steady state, restart those after a
	// restart; nil for runners that exit when done.
	steady, restart *rig.RequestCounts
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
	control rig.CPUTimes
}

func (r Result) objectsPerSecond() float64 {
	return float64(r.objects) / r.converge.Seconds()
}

// Measure resets the objects, then runs r until every object is
// annotated; a controller then runs for --steady of steady state, is
// restarted and runs for --steady again, and is stopped.
func Measure(ctx context.Context, b *rig.Bench, r *rig.Runner, round int) (Result, error) {
	res := Result{runner: r.Name, round: round, objects: b.Objects}
	if err := b.Reset(ctx); err != nil {
		return res, err
	}
	w, err := b.OpenWindow(ctx)
	if err != nil {
		return res, err
	}
	before, err := b.ControlPlaneCPU(ctx)
	if err != nil {
		return res, err
	}
	progress.Logf("Round %d: starting %s", round, r.Name)
	prof := b.StartProfile(ctx, fmt.Sprintf("%s-%s-%d", b.Shape.Name, r.Name, round))
	c, err := b.Start(r, fmt.Sprint(round), nil)
	if err != nil {
		return res, err
	}
	defer func() { _ = c.Stop() }() // in case of an error; stopping twice is fine
	alive := c.Failed
	if r.Controller {
		alive = c.Alive
	}
	if err := b.Tracker.WaitFor(ctx, r.Name, b.Opts.Timeout, b.Tracker.Is(b.Objects, b.Objects), alive); err != nil {
		return res, err
	}
	first, last := b.Tracker.Span()
	res.first, res.converge = first.Sub(c.Started), last.Sub(c.Started)
	if r.Controller {
		res.cpu = c.CPU()
	}
	after, err := b.ControlPlaneCPU(ctx)
	if err != nil {
		return res, err
	}
	res.control = after.Sub(before)
	if err := progress.Sleep(ctx, rig.Settle); err != nil {
		return res, err
	}
	if res.run, err = w.Close(ctx); err != nil {
		return res, err
	}
	progress.Logf("%s: first object annotated %.1fs after its start, every object after %.1fs (%.0f objects/s); %d PATCH, %d GET, %d LIST, %d WATCH; kube-apiserver's CPU %.1fs, etcd's %.1fs",
		r.Name, res.first.Seconds(), res.converge.Seconds(), res.objectsPerSecond(), res.run.Patch, res.run.Get, res.run.List, res.run.Watch,
		res.control.APIServer, res.control.Etcd)
	if len(res.run.Other) > 0 {
		progress.Logf("  other requests: %s", res.run.Other)
	}
	if err := prof.Wait(); err != nil {
		return res, err
	}

	if !r.Controller {
		if err := c.Wait(child.StopTimeout); err != nil {
			return res, err
		}
		res.peakRSS, res.cpu = c.PeakRSS(), c.CPU()
		return res, nil
	}
	if res.steady, err = hold(ctx, b, c, "steady state"); err != nil {
		return res, err
	}
	res.restRSS = c.RSS()
	if err := c.Stop(); err != nil {
		return res, err
	}
	res.peakRSS = c.PeakRSS()

	w, err = b.OpenWindow(ctx)
	if err != nil {
		return res, err
	}
	restarted, err := b.Start(r, fmt.Sprintf("%d-restart", round), nil)
	if err != nil {
		return res, err
	}
	defer func() { _ = restarted.Stop() }()
	if res.restart, err = holdWindow(ctx, b, restarted, w, "after a restart"); err != nil {
		return res, err
	}
	if err := restarted.Stop(); err != nil {
		return res, err
	}
	res.restartRSS = restarted.PeakRSS()
	return res, nil
}

// hold lets c run for --steady and returns the requests served meanwhile.
func hold(ctx context.Context, b *rig.Bench, c *child.Process, what string) (*rig.RequestCounts, error) {
	w, err := b.OpenWindow(ctx)
	if err != nil {
		return nil, err
	}
	return holdWindow(ctx, b, c, w, what)
}

// holdWindow lets c run for --steady and closes w.
func holdWindow(ctx context.Context, b *rig.Bench, c *child.Process, w *rig.Window, what string) (*rig.RequestCounts, error) {
	deadline := time.Now().Add(b.Opts.Steady)
	for time.Now().Before(deadline) {
		if err := c.Alive(); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if err := progress.Sleep(ctx, min(100*time.Millisecond, time.Until(deadline))); err != nil {
			return nil, err
		}
	}
	counts, err := w.Close(ctx)
	if err != nil {
		return nil, err
	}
	progress.Logf("%s %s: %d writes in %v (%d GET, %d LIST)", c.Name, what, counts.Writes, b.Opts.Steady, counts.Get, counts.List)
	if counts.Writes > 0 {
		progress.Logf("  WARNING: %s wrote to objects that were all annotated already", c.Name)
	}
	return &counts, nil
}
