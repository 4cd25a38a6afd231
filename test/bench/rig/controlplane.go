package rig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// CPUTimes are the CPU seconds, user and system, that the control plane's
// processes have used.
type CPUTimes struct{ APIServer, Etcd float64 }

// Sub returns c less before.
func (c CPUTimes) Sub(before CPUTimes) CPUTimes {
	return CPUTimes{APIServer: c.APIServer - before.APIServer, Etcd: c.Etcd - before.Etcd}
}

// ControlPlaneCPU reads the CPU time kube-apiserver and etcd have used
// since they started, from their own metrics.
func (b *Bench) ControlPlaneCPU(ctx context.Context) (CPUTimes, error) {
	api, err := b.Env.ServerMetric(ctx, "process_cpu_seconds_total", nil)
	if err != nil {
		return CPUTimes{}, fmt.Errorf("kube-apiserver CPU: %w", err)
	}
	body, err := child.Get(ctx, b.Env.EtcdURL()+"/metrics")
	if err != nil {
		return CPUTimes{}, fmt.Errorf("etcd CPU: %w", err)
	}
	return CPUTimes{APIServer: api, Etcd: promtext.MetricValue(body, "process_cpu_seconds_total", nil)}, nil
}

// Profile is a CPU profile of kube-apiserver being taken, or nil when
// --apiserver-profile is not set.
type Profile struct {
	path string
	done chan error
}

// StartProfile starts a CPU profile of kube-apiserver over
// --apiserver-profile-for, to be written to a file named after name in
// --apiserver-profile; nil when that flag is not set.
func (b *Bench) StartProfile(ctx context.Context, name string) *Profile {
	if b.Opts.ProfileDir == "" {
		return nil
	}
	p := &Profile{path: filepath.Join(b.Opts.ProfileDir, name+".pprof"), done: make(chan error, 1)}
	go func() {
		data, err := b.Env.APIServerProfile(ctx, b.Opts.ProfileFor)
		if err == nil {
			err = os.WriteFile(p.path, data, 0o644)
		}
		p.done <- err
	}()
	return p
}

// Wait waits until the profile is written; a nil profile is none.
func (p *Profile) Wait() error {
	if p == nil {
		return nil
	}
	if err := <-p.done; err != nil {
		return fmt.Errorf("kube-apiserver's CPU profile: %w", err)
	}
	progress.Logf("  kube-apiserver's CPU profile: %s", p.path)
	return nil
}

// ProfileLimit bounds --apiserver-profile-for: the API server's profile
// handler holds the request open that long.
const ProfileLimit = 5 * time.Minute
