package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// cpuTimes are the CPU seconds, user and system, that the control plane's
// processes have used.
type cpuTimes struct{ apiServer, etcd float64 }

func (c cpuTimes) sub(before cpuTimes) cpuTimes {
	return cpuTimes{apiServer: c.apiServer - before.apiServer, etcd: c.etcd - before.etcd}
}

// controlPlaneCPU reads the CPU time kube-apiserver and etcd have used
// since they started, from their own metrics.
func (b *bench) controlPlaneCPU(ctx context.Context) (cpuTimes, error) {
	api, err := b.env.ServerMetric(ctx, "process_cpu_seconds_total", nil)
	if err != nil {
		return cpuTimes{}, fmt.Errorf("kube-apiserver CPU: %w", err)
	}
	body, err := get(ctx, b.env.EtcdURL()+"/metrics")
	if err != nil {
		return cpuTimes{}, fmt.Errorf("etcd CPU: %w", err)
	}
	return cpuTimes{apiServer: api, etcd: promtext.MetricValue(body, "process_cpu_seconds_total", nil)}, nil
}

// profile is a CPU profile of kube-apiserver being taken, or nil when
// --apiserver-profile is not set.
type profile struct {
	path string
	done chan error
}

// startProfile starts a CPU profile of kube-apiserver over
// --apiserver-profile-for, to be written to a file named after name in
// --apiserver-profile; nil when that flag is not set.
func (b *bench) startProfile(ctx context.Context, name string) *profile {
	if b.opts.profileDir == "" {
		return nil
	}
	p := &profile{path: filepath.Join(b.opts.profileDir, name+".pprof"), done: make(chan error, 1)}
	go func() {
		data, err := b.env.APIServerProfile(ctx, b.opts.profileFor)
		if err == nil {
			err = os.WriteFile(p.path, data, 0o644)
		}
		p.done <- err
	}()
	return p
}

// wait waits until the profile is written; a nil profile is none.
func (p *profile) wait() error {
	if p == nil {
		return nil
	}
	if err := <-p.done; err != nil {
		return fmt.Errorf("kube-apiserver's CPU profile: %w", err)
	}
	logf("  kube-apiserver's CPU profile: %s", p.path)
	return nil
}

// profileLimit bounds --apiserver-profile-for: the API server's profile
// handler holds the request open that long.
const profileLimit = 5 * time.Minute

// roundRatio is the median, over the rounds, of col's value for runner
// divided by its value for base in the same round: runs of one round ran
// minutes apart, under more similar load than runs of different rounds.
func (s *shapeResults) roundRatio(runner, base string, col column) *float64 {
	byRound := map[int]float64{}
	for _, run := range s.runs {
		if v := col(run); run.runner == base && v != nil && *v > 0 {
			byRound[run.round] = *v
		}
	}
	var ratios []float64
	for _, run := range s.runs {
		d, ok := byRound[run.round]
		if v := col(run); run.runner == runner && v != nil && ok {
			ratios = append(ratios, *v/d)
		}
	}
	return medianOf(ratios)
}

// printControlPlane prints what the control plane spent on each runner.
func (s *shapeResults) printControlPlane(w io.Writer) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| runner | kube-apiserver CPU (s) per 10k objects | ÷ raw-metadata | ÷ raw-metadata, per round | etcd CPU (s) per 10k objects | ÷ raw-metadata, per round |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	rawMeta := s.median(rawMetadataRunner, colAPICPU)
	for _, name := range s.runnerNames() {
		api := s.median(name, colAPICPU)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", name, num(api, 2), ratio(api, rawMeta),
			num(s.roundRatio(name, rawMetadataRunner, colAPICPU), 2),
			num(s.median(name, colEtcdCPU), 2), num(s.roundRatio(name, rawMetadataRunner, colEtcdCPU), 2))
	}
}
