package memory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// rebuildResult is what a reload cost whose rules make kube-annotator's
// caches keep one more label, which no object carries: each cache widens
// without listing again, and every object is synced.
type rebuildResult struct {
	objects int
	// took is the time from the rules file's write until every object
	// had been synced again and every informer was synced.
	took time.Duration
	// requests are those the API server served meanwhile.
	requests rig.RequestCounts
}

// widenedRulesYAML is rig.RulesYAML with a label to remove, which no object
// carries: the caches must keep one more key, and no object changes.
var widenedRulesYAML = rig.RulesYAML + "  removeLabels: [bench-rebuild]\n"

// rebuild rewrites the rules file of c, a kube-annotator converged and at
// rest, with widenedRulesYAML, and measures until c has synced every
// object again (kube_annotator_syncs_total, from its metrics) and is
// ready: its readiness fails while an informer has not synced. The rules
// file is restored before it returns.
func rebuild(ctx context.Context, b *rig.Bench, readyz, metrics string, c *child.Process) (*rebuildResult, error) {
	w, err := b.OpenWindow(ctx)
	if err != nil {
		return nil, err
	}
	progress.Logf("Reloading rules that make kube-annotator's caches keep one more label, at %d objects", b.Objects)
	syncs := func() (float64, error) {
		body, err := child.Get(ctx, metrics)
		return promtext.MetricValue(body, "kube_annotator_syncs_total", map[string]string{"result": "success"}), err
	}
	before, err := syncs()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := writeAtomically(b.Rules, widenedRulesYAML); err != nil {
		return nil, err
	}
	defer func() {
		if err := writeAtomically(b.Rules, rig.RulesYAML); err != nil {
			progress.Logf("  could not restore the rules file: %v", err)
		}
	}()
	for n := before; n < before+float64(b.Objects); n, err = syncs() {
		if err != nil {
			return nil, fmt.Errorf("reload: %w", err)
		}
		if time.Since(start) > b.Opts.Timeout {
			return nil, fmt.Errorf("reload: %.0f of %d objects synced after %v", n-before, b.Objects, b.Opts.Timeout)
		}
		if err := progress.Sleep(ctx, 20*time.Millisecond); err != nil {
			return nil, err
		}
	}
	if err := child.WaitProbe(ctx, readyz, true, b.Opts.Timeout, 10*time.Millisecond, c.Alive); err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	res := &rebuildResult{objects: b.Objects, took: time.Since(start)}
	if err := progress.Sleep(ctx, rig.Settle); err != nil {
		return nil, err
	}
	if res.requests, err = w.Close(ctx); err != nil {
		return nil, err
	}
	progress.Logf("Reloaded the rules of %d objects in %.1fs: %d writes, %d LIST, %d WATCH", b.Objects, res.took.Seconds(),
		res.requests.Writes, res.requests.List, res.requests.Watch)
	return res, nil
}

// writeAtomically replaces the file at path with content, so that a
// watcher of its directory never reads it half written.
func writeAtomically(path, content string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
