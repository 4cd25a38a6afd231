package rig

import (
	"context"
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/test/bench/tracker"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// Bench is one benchmark: the control plane, the benchmark's clients and
// watch, and the objects seeded so far.
type Bench struct {
	Opts Options
	Dir  string // the runners' binaries and logs, the rules file
	Env  *h.Env
	// Dynamic and Metadata are the benchmark's own clients, with no
	// client-side rate limiting.
	Dynamic  dynamic.Interface
	Metadata metadata.Interface
	// Tracker is the benchmark's own watch of the objects.
	Tracker *tracker.Tracker
	// Rules is kube-annotator's rules file.
	Rules string
	// Shape is the shape of the objects seeded, Objects their number.
	Shape   workload.Shape
	Objects int
}

// Connect builds the benchmark's clients and starts its watch.
func (b *Bench) Connect(ctx context.Context) error {
	cfg := rest.CopyConfig(b.Env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	var err error
	if b.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	if b.Metadata, err = metadata.NewForConfig(cfg); err != nil {
		return err
	}
	watchCfg := rest.CopyConfig(cfg)
	requests := &h.Counter{}
	requests.Wrap(watchCfg)
	watchClient, err := metadata.NewForConfig(watchCfg)
	if err != nil {
		return err
	}
	b.Tracker, err = tracker.Start(ctx, watchClient, requests)
	return err
}

// LiveGOGC is the GOGC of the run that estimates the live heap. A
// controller at rest allocates next to nothing, so with its default GOGC
// (50) no collection runs after it has filled its cache, and heap in use
// keeps up to half as much garbage as live data from the sync; with
// GOGC=10 it keeps at most about a tenth.
const LiveGOGC = 10

// MemoryEnv is the environment added to kube-annotator while its memory
// is measured: GOMEMLIMIT if --gomemlimit is set.
func (b *Bench) MemoryEnv() []string {
	if b.Opts.GoMemLimit == 0 {
		return nil
	}
	return []string{fmt.Sprintf("GOMEMLIMIT=%d", b.Opts.GoMemLimit)}
}

// MemLimitNote compares a peak RSS in KiB with --gomemlimit, if set.
func (b *Bench) MemLimitNote(peakRSS int64) string {
	if b.Opts.GoMemLimit == 0 {
		return ""
	}
	return fmt.Sprintf(" (GOMEMLIMIT %.0f MiB: %.0f%% of it)", float64(b.Opts.GoMemLimit)/(1<<20), 100*float64(peakRSS<<10)/float64(b.Opts.GoMemLimit))
}
