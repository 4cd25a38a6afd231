// Package reloader keeps the rules in force up to date while the controller
// runs: it reloads the rules file when it changes (or on SIGHUP), and
// resolves the rules' resources again when the cluster's resources change,
// so that a CRD installed after start is picked up and a deleted one is
// dropped. An invalid file never replaces the last good rules.
package reloader

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// Options configure a Reloader.
type Options struct {
	// Path is the rules file.
	Path string
	// Resolve resolves a resource name; Reset drops cached discovery so
	// that the next Resolve sees the cluster as it is now.
	Resolve rules.ResolveFunc
	Reset   func()
	// Apply puts a new set of rules in force; ctx is the one Run was given.
	Apply func(ctx context.Context, set *rules.Set)
	// Watch reloads the file when it changes; otherwise only on SIGHUP.
	Watch bool
	// RetryInterval is how often resources that are not served are looked
	// up again; Interval how often all are, to notice removed resources.
	RetryInterval, Interval time.Duration
	// Metrics, when set, receive reload results.
	Metrics *metrics.Metrics
	// ExcludeNamespaces are namespace globs no rule applies in.
	ExcludeNamespaces []string
}

// Reloader owns the rules in force. Create it with New; Run it.
type Reloader struct {
	opts Options
	kick chan struct{}

	mu         sync.Mutex
	file       *rules.File
	set        *rules.Set
	unresolved []rules.FieldError
	failed     bool // the file on disk is invalid
}

// New returns a Reloader whose rules in force are file, resolved as set
// with unresolved names not served.
func New(opts Options, file *rules.File, set *rules.Set, unresolved []rules.FieldError) *Reloader {
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = 2 * time.Second
	}
	if opts.Interval <= 0 {
		opts.Interval = 30 * time.Second
	}
	r := &Reloader{opts: opts, kick: make(chan struct{}, 1), file: file, set: set, unresolved: unresolved}
	if opts.Metrics != nil {
		opts.Metrics.RulesLastReloadSuccessful.Set(1) // the caller loaded file; Run counts its loads
	}
	r.gauges()
	return r
}

// Resolve asks for the rules' resources to be resolved again soon, e.g.
// because one of them stopped being served. It does not block.
func (r *Reloader) Resolve() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Set returns the compiled rules in force.
func (r *Reloader) Set() *rules.Set {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.set
}

// Run reloads and re-resolves until ctx ends. It starts with one reload, so
// that a process that waited (e.g. for leadership) starts from the file and
// the cluster as they are now.
func (r *Reloader) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	var events <-chan fsnotify.Event
	var errs <-chan error
	if r.opts.Watch {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return fmt.Errorf("watch rules file: %w", err)
		}
		defer w.Close()
		// The directory, not the file: editors replace the file by renaming
		// a new one over it, and a ConfigMap volume swaps a ..data symlink.
		dir := filepath.Dir(r.opts.Path)
		if err := w.Add(dir); err != nil {
			return fmt.Errorf("watch %s: %w", dir, err)
		}
		events, errs = w.Events, w.Errors
		logger.Info("Watching rules file", "path", r.opts.Path)
	}

	// Changes come in bursts (write, chmod, rename); act once they settle.
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	r.reload(ctx, "start", true)
	tick := time.NewTimer(r.interval())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-events:
			debounce.Reset(100 * time.Millisecond)
		case err := <-errs:
			logger.Error(err, "Watching rules file")
		case <-debounce.C:
			r.reload(ctx, "file changed", false)
		case <-hup:
			r.reload(ctx, "SIGHUP", true)
		case <-r.kick:
			r.resolve(ctx)
		case <-tick.C:
			r.resolve(ctx)
		}
		tick.Reset(r.interval())
	}
}

// interval is how long until the next look-up: short while some resources
// are not served, so that a CRD installed now is picked up within seconds.
func (r *Reloader) interval() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.unresolved) > 0 {
		return r.opts.RetryInterval
	}
	return r.opts.Interval
}

// reload loads the file; an invalid file, or one whose rules conflict, is
// reported and leaves the rules in force as they are. Unless force is set,
// a file whose rules did not change is not resolved again.
func (r *Reloader) reload(ctx context.Context, reason string, force bool) {
	logger := klog.FromContext(ctx)
	fail := func(err error) {
		r.mu.Lock()
		r.failed = true
		r.mu.Unlock()
		r.record(metrics.Failure)
		logger.Error(err, "Rules file invalid; the previous rules are still enforced", "path", r.opts.Path, "reason", reason)
	}
	file, err := rules.Load(r.opts.Path)
	if err != nil {
		fail(err)
		return
	}
	r.mu.Lock()
	same, wasFailed := reflect.DeepEqual(file, r.file), r.failed
	r.mu.Unlock()
	if same && !force {
		if wasFailed {
			r.mu.Lock()
			r.failed = false
			r.mu.Unlock()
			r.record(metrics.Success)
			logger.Info("Rules file valid again; rules unchanged", "path", r.opts.Path)
		}
		return
	}
	if err := r.apply(ctx, file); err != nil {
		fail(err)
		return
	}
	r.mu.Lock()
	r.failed = false
	r.mu.Unlock()
	r.record(metrics.Success)
	if !same {
		logger.Info("Rules reloaded", "path", r.opts.Path, "reason", reason, "rules", len(file.Rules))
	}
}

// resolve resolves the rules in force again, against the cluster as it is
// now, and applies the result if it changed.
func (r *Reloader) resolve(ctx context.Context) {
	r.mu.Lock()
	file := r.file
	r.mu.Unlock()
	if err := r.apply(ctx, file); err != nil {
		klog.FromContext(ctx).Error(err, "Rules conflict on the resources now served; the previous rules are still enforced")
	}
}

// apply compiles file against the cluster as it is now and, unless its
// rules conflict, makes it the file in force, applying the compiled set
// when it differs from the one in force.
func (r *Reloader) apply(ctx context.Context, file *rules.File) error {
	if r.opts.Reset != nil {
		r.opts.Reset()
	}
	set, unresolved, err := rules.Compile(r.opts.Path, file, r.opts.Resolve)
	if err != nil {
		return err
	}
	if err := set.ExcludeNamespaces(r.opts.ExcludeNamespaces); err != nil {
		return err
	}
	r.mu.Lock()
	changed := !reflect.DeepEqual(set, r.set)
	unresolvedChanged := !slices.Equal(unresolved, r.unresolved)
	r.file, r.set, r.unresolved = file, set, unresolved
	r.mu.Unlock()
	if unresolvedChanged {
		logger := klog.FromContext(ctx)
		for _, u := range unresolved {
			logger.Error(nil, "Resource not served; its rules are not enforced until it is", "field", u.Field, "reason", u.Message)
		}
	}
	if changed {
		r.opts.Apply(ctx, set)
	}
	r.gauges()
	return nil
}

// record counts a load of the file.
func (r *Reloader) record(result string) {
	if m := r.opts.Metrics; m != nil {
		m.RulesReloads.WithLabelValues(result).Inc()
		if result == metrics.Success {
			m.RulesLastReloadSuccessful.Set(1)
		} else {
			m.RulesLastReloadSuccessful.Set(0)
		}
	}
	r.gauges()
}

// gauges sets the metrics that describe the rules in force.
func (r *Reloader) gauges() {
	m := r.opts.Metrics
	if m == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m.Rules.Set(float64(len(r.file.Rules)))
	m.ResourcesUnresolved.Set(float64(len(r.unresolved)))
}
