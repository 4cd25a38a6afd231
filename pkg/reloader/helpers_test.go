package reloader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Test helpers shared by this package's tests.

var (
	configMaps = source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
	widgets    = source.Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Namespaced: true}
)

// resolver is a fake cluster: it serves the resources in served, and
// cannot be asked while down.
type resolver struct {
	mu     sync.Mutex
	served map[string]source.Resource
	down   bool
	// answered counts the names resolved while up, served or not.
	answered atomic.Int64
}

// setDown makes the fake cluster unreachable, or reachable again.
func (f *resolver) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

func (f *resolver) resolve(name string) (source.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return source.Resource{}, errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	}
	f.answered.Add(1)
	r, ok := f.served[name]
	if !ok {
		return source.Resource{}, fmt.Errorf("the server doesn't have a resource type %q: %w", name, resolve.ErrNotServed)
	}
	return r, nil
}

func (f *resolver) serve(name string, r source.Resource) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.served[name] = r
}

// harness is a running Reloader with fakes around it.
type harness struct {
	t       *testing.T
	path    string
	res     *resolver
	exclude []string
	resets  atomic.Int64
	trigger Trigger
	applied chan *rules.Set
	m       *metrics.Metrics
	r       *Reloader
	logs    ktesting.Buffer // what Run logged
}

// start writes content as the rules file, compiles it against a cluster
// that serves only configmaps, with no rule applying in the namespaces
// exclude names, and runs a Reloader on it with opts (whose Path, Resolve,
// Exclude, Reset, Apply, Trigger and Metrics it sets) until the test ends. It
// returns once Run has made its initial load, so its signal handler and
// file watch are in place.
func start(t *testing.T, content string, opts Options, exclude ...string) *harness {
	t.Helper()
	h := newHarness(t, content, opts, exclude...)
	h.run()
	h.waitFor("Run's initial load", func() bool { return h.reloadMetrics().successes == 1 })
	return h
}

// newHarness is start without Run.
func newHarness(t *testing.T, content string, opts Options, exclude ...string) *harness {
	t.Helper()
	h := newFakes(t, filepath.Join(t.TempDir(), "rules.yaml"), exclude...)
	h.replace(content)
	h.build(opts)
	return h
}

// newFakes returns a harness for the rules file at path, with its fakes
// and no Reloader yet.
func newFakes(t *testing.T, path string, exclude ...string) *harness {
	return &harness{
		t:       t,
		path:    path,
		res:     &resolver{served: map[string]source.Resource{"configmaps": configMaps}},
		exclude: exclude,
		trigger: NewTrigger(),
		applied: make(chan *rules.Set, 10),
		m:       metrics.New(),
	}
}

// build compiles the rules file as it is now and makes the Reloader, with
// opts completed as start says.
func (h *harness) build(opts Options) {
	t := h.t
	t.Helper()
	file, err := rules.Load(h.path)
	if err != nil {
		t.Fatal(err)
	}
	set, unresolved, err := h.compile(file)
	if err != nil {
		t.Fatal(err)
	}
	opts.Path, opts.Resolve, opts.Exclude, opts.Trigger, opts.Metrics = h.path, h.res.resolve, h.exclude, h.trigger, h.m
	opts.Reset = func() { h.resets.Add(1) }
	opts.Apply = func(ctx context.Context, s *rules.Set) {
		if ctx.Value(runKey{}) != h {
			t.Errorf("Apply got a context other than Run's")
		}
		h.applied <- s
	}
	h.r = New(opts, file, set, unresolved)
}

type runKey struct{}

// run runs the Reloader until the test ends.
func (h *harness) run() {
	logger := ktesting.NewLogger(h.t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	h.logs = logger.GetSink().(ktesting.Underlier).GetBuffer()
	h.runWith(logger)
}

// runWith runs the Reloader until the test ends, logging to logger.
func (h *harness) runWith(logger klog.Logger) {
	t := h.t
	ctx := klog.NewContext(context.Background(), logger)
	ctx, cancel := context.WithCancel(context.WithValue(ctx, runKey{}, h))
	done := make(chan error, 1)
	go func() { done <- h.r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run() = %v, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return within 10s of cancellation")
		}
	})
}

// resolve kicks a re-resolution and returns once it is done: a second
// kick is only taken once the first is handled.
func (h *harness) resolve() {
	h.t.Helper()
	for range 2 {
		resets := h.resets.Load()
		h.trigger.Resolve()
		h.waitFor("a re-resolution", func() bool { return h.resets.Load() > resets })
	}
}

// replace writes content next to the rules file and renames it over the
// file, as editors do.
func (h *harness) replace(content string) {
	h.t.Helper()
	tmp := h.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, h.path); err != nil {
		h.t.Fatal(err)
	}
}

// waitApply returns the next set applied, failing after a few seconds.
func (h *harness) waitApply() *rules.Set {
	h.t.Helper()
	select {
	case s := <-h.applied:
		return s
	case <-time.After(10 * time.Second):
		h.t.Fatal("no Apply within 10s")
		return nil
	}
}

// noApply fails if a set is applied within d (0: already).
func (h *harness) noApply(d time.Duration) {
	h.t.Helper()
	select {
	case s := <-h.applied:
		h.t.Fatalf("unexpected Apply of %v", targets(s))
	case <-time.After(d):
	}
}

// waitFor polls cond until it holds, failing after a few seconds.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(h.t.Context(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		h.t.Fatalf("timed out waiting for %s", what)
	}
}

// exported returns the value of the gauge or counter named name (without
// the kube_annotator_ prefix) as the registry exports it, with the label
// result when result is not "".
func (h *harness) exported(name, result string) float64 {
	h.t.Helper()
	families, err := h.m.Registry.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "kube_annotator_"+name {
			continue
		}
		for _, m := range f.GetMetric() {
			if result != "" && !hasLabel(m, "result", result) {
				continue
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	h.t.Fatalf("no metric %s{result=%q}", name, result)
	return 0
}

// value returns the value of a counter or gauge.
func (h *harness) value(m prometheus.Metric) float64 {
	h.t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		h.t.Fatal(err)
	}
	if d.GetCounter() != nil {
		return d.GetCounter().GetValue()
	}
	return d.GetGauge().GetValue()
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// checkMetrics compares the reload metrics with want.
func (h *harness) checkMetrics(want reloadMetrics) {
	h.t.Helper()
	if got := h.reloadMetrics(); got != want {
		h.t.Errorf("metrics = %+v, want %+v", got, want)
	}
}

// waitMetrics waits until the reload metrics are want: Apply is called
// before they are updated.
func (h *harness) waitMetrics(want reloadMetrics) {
	h.t.Helper()
	var got reloadMetrics
	err := wait.PollUntilContextTimeout(h.t.Context(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { got = h.reloadMetrics(); return got == want, nil })
	if err != nil {
		h.t.Fatalf("metrics = %+v, want %+v", got, want)
	}
}

type reloadMetrics struct {
	successes, failures, lastSuccessful, rules, unresolved float64
}

func (h *harness) reloadMetrics() reloadMetrics {
	return reloadMetrics{
		successes:      h.value(h.m.RulesReloads.WithLabelValues(metrics.Success)),
		failures:       h.value(h.m.RulesReloads.WithLabelValues(metrics.Failure)),
		lastSuccessful: h.value(h.m.RulesLastReloadSuccessful),
		rules:          h.value(h.m.Rules),
		unresolved:     h.value(h.m.ResourcesUnresolved),
	}
}

// compile compiles file against the fake cluster as it is now, with no
// rule applying in the excluded namespaces, as the Reloader does.
func (h *harness) compile(file *rulefile.File) (*rules.Set, []rulefile.FieldError, error) {
	return resolve.Compile(h.path, file, h.res.resolve, nil, h.exclude)
}

// compiled returns content compiled as the Reloader would now.
func (h *harness) compiled(content string) *rules.Set {
	h.t.Helper()
	f, err := rules.Parse(h.path, []byte(content))
	if err != nil {
		h.t.Fatal(err)
	}
	set, _, err := h.compile(f)
	if err != nil {
		h.t.Fatal(err)
	}
	return set
}

// targets formats s for messages.
func targets(s *rules.Set) []string {
	var out []string
	for _, t := range s.SortedTargets() {
		for _, r := range t.Rules {
			out = append(out, fmt.Sprintf("%s: %s %v", source.GVRString(t.GVR), r.Name, r.Annotations))
		}
	}
	return out
}

// logged counts the entries Run logged with message msg.
func (h *harness) logged(msg string) int {
	n := 0
	for _, e := range h.logs.Data() {
		if e.Message == msg {
			n++
		}
	}
	return n
}
