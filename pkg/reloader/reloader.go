// Package reloader keeps the rules in force up to date while the controller
// runs: it reloads the rules file when it changes (or on SIGHUP), and
// resolves the rules' resources again when the cluster's resources change,
// so that a CRD installed after start is picked up and a deleted one is
// dropped. An invalid file never replaces the last good rules, and neither
// does a file compiled while the API server could not be asked.
package reloader

import (
	"context"
	"errors"
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
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// ErrUnreachable is resolve.ErrUnreachable: a compile that could not ask
// the API server which resources it serves. The Reloader then keeps the
// rules in force and tries again a RetryInterval later.
var ErrUnreachable = resolve.ErrUnreachable

// Trigger asks a Reloader to resolve the rules' resources again soon. Make
// it first, so that what pulls it (the controller, when a resource stops
// being served) is complete before the Reloader that it triggers is built.
type Trigger chan struct{}

// NewTrigger returns a Trigger for Options.Trigger.
func NewTrigger() Trigger { return make(Trigger, 1) }

// Resolve pulls the trigger. It does not block: pulls made before the
// Reloader gets to them count as one.
func (t Trigger) Resolve() {
	select {
	case t <- struct{}{}:
	default:
	}
}

// Options configure a Reloader.
type Options struct {
	// Path is the rules file.
	Path string
	// Resolve resolves the rules' resource names against the cluster (a
	// resolve.Resolver's Resolve); Reset, called before each compile,
	// drops cached discovery so that it sees the cluster as it is now.
	Resolve rules.ResolveFunc
	Reset   func()
	// Schema, when set, has the rules' CEL type-checked against the
	// resources' schemas at each compile (a resolve.Resolver's Schema).
	Schema rules.SchemaFunc
	// Exclude are the namespace globs in which no rule applies.
	Exclude []string
	// Apply puts a new set of rules in force; ctx is the one Run was given.
	Apply func(ctx context.Context, set *rules.Set)
	// Trigger, pulled, has the rules' resources resolved again at once.
	Trigger Trigger
	// Watch reloads the file when it changes; otherwise only on SIGHUP.
	Watch bool
	// RetryInterval is how often resources that are not served are looked
	// up again; Interval how often all are, to notice removed resources.
	RetryInterval, Interval time.Duration
	// Metrics receive reload results and describe the rules in force.
	Metrics *metrics.Metrics
	// Guard may hold a reload of the file; by default none is held.
	Guard Guard
}

// Reloader owns the rules in force. Create it with New; Run it.
type Reloader struct {
	opts Options

	mu         sync.Mutex
	file       *rules.File
	set        *rules.Set
	unresolved []rules.FieldError
	failed     bool // the file on disk is invalid
	held       *heldReload
	lookedUp   time.Time // when the resources were last resolved
	// unreachable is set while the last compile could not ask the API
	// server; pending is then the file it compiled, when that is not the
	// file in force: it is compiled again at the next look-up.
	unreachable bool
	pending     *rules.File

	// reported are the unresolved resources last logged. Only Run's
	// goroutine uses it.
	reported []rules.FieldError
}

// New returns a Reloader whose rules in force are file, compiled just now
// (by resolve.Compile, with opts.Resolve and opts.Exclude) into set, with
// unresolved names not served. Apply and Resolve are required; the other
// options have defaults.
func New(opts Options, file *rules.File, set *rules.Set, unresolved []rules.FieldError) *Reloader {
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = 2 * time.Second
	}
	if opts.Interval <= 0 {
		opts.Interval = 30 * time.Second
	}
	if opts.Reset == nil {
		opts.Reset = func() {}
	}
	if opts.Trigger == nil {
		opts.Trigger = NewTrigger()
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New()
	}
	if opts.Guard == nil {
		opts.Guard = func(context.Context, *rules.Set) error { return nil }
	}
	r := &Reloader{opts: opts, file: file, set: set, unresolved: unresolved, lookedUp: time.Now()}
	opts.Metrics.RulesLastReloadSuccessful.Set(1) // the caller loaded file; Run counts its loads
	r.gauges()
	return r
}

// Set returns the compiled rules in force.
func (r *Reloader) Set() *rules.Set {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.set
}

// Run reloads and re-resolves until ctx ends. It starts by loading the
// file, so that a process that waited (e.g. for leadership) starts from the
// file as it is now; the resources are resolved again an interval after
// they last were, at once if that was longer ago.
func (r *Reloader) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	events, errs, stop, err := r.watch(ctx)
	if err != nil {
		return err
	}
	defer stop()

	// Changes come in bursts (write, chmod, rename); act once they settle.
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	r.reload(ctx, atStart)
	r.report(ctx)
	tick := time.NewTimer(r.untilLookUp())
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
			r.reload(ctx, fileChanged)
		case <-hup:
			r.reload(ctx, hangUp)
		case <-r.opts.Trigger:
			r.resolve(ctx)
		case <-tick.C:
			r.resolve(ctx)
		}
		tick.Reset(r.untilLookUp())
	}
}

// watch watches the rules file when Options.Watch says so; otherwise its
// channels never deliver. stop ends the watch.
func (r *Reloader) watch(ctx context.Context) (events <-chan fsnotify.Event, errs <-chan error, stop func(), err error) {
	if !r.opts.Watch {
		return nil, nil, func() {}, nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("watch rules file: %w", err)
	}
	// The directory, not the file: editors replace the file by renaming
	// a new one over it, and a ConfigMap volume swaps a ..data symlink.
	dir := filepath.Dir(r.opts.Path)
	if err := w.Add(dir); err != nil {
		return nil, nil, nil, fmt.Errorf("watch %s: %w", dir, errors.Join(err, w.Close()))
	}
	klog.FromContext(ctx).Info("Watching rules file", "path", r.opts.Path)
	stop = func() {
		if err := w.Close(); err != nil {
			klog.FromContext(ctx).Error(err, "Stopping the rules file watch")
		}
	}
	return w.Events, w.Errors, stop, nil
}

// untilLookUp is how long until the resources are next looked up: an
// interval after they last were, short while some are not served, so that a
// CRD installed now is picked up within seconds.
func (r *Reloader) untilLookUp() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	interval := r.opts.Interval
	if len(r.unresolved) > 0 || r.unreachable {
		interval = r.opts.RetryInterval
	}
	return interval - time.Since(r.lookedUp)
}

// A cause is why the file is loaded; it says what a file whose rules did
// not change does.
type cause struct {
	name string
	// resolve has the rules resolved again although they did not change.
	resolve bool
	// count counts the load although the rules did not change.
	count bool
	// guard has Options.Guard decide whether new rules may be applied.
	guard bool
}

var (
	atStart     = cause{name: "start", count: true}
	fileChanged = cause{name: "file changed", guard: true}
	hangUp      = cause{name: "SIGHUP", resolve: true, count: true, guard: true}
)

// reload loads the file; an invalid file, or one whose rules conflict, is
// reported and leaves the rules in force as they are. A file whose rules
// did not change is resolved again only if c says so.
func (r *Reloader) reload(ctx context.Context, c cause) {
	logger := klog.FromContext(ctx)
	file, err := rules.Load(r.opts.Path)
	r.mu.Lock()
	r.pending = nil // the file on disk is what counts now
	r.mu.Unlock()
	if err != nil {
		r.fail(ctx, c, err)
		return
	}
	r.mu.Lock()
	same, wasFailed := file.Equal(r.file), r.failed
	if same {
		r.file = file // the same rules, at the lines errors now name
	}
	r.mu.Unlock()
	if same {
		r.release(ctx) // the file is back to the rules in force
	}
	if same && !c.resolve {
		if wasFailed {
			r.succeed()
			logger.Info("Rules file valid again; rules unchanged", "path", r.opts.Path)
		} else if c.count {
			r.succeed()
		}
		return
	}
	confirmed := r.confirms(file, c)
	var held errHeld
	switch err := r.apply(ctx, file, c.guard && !confirmed); {
	case errors.As(err, &held):
		r.hold(ctx, file, held.error)
		return
	case err != nil:
		r.fail(ctx, c, err)
		return
	}
	if !same {
		r.release(ctx)
	}
	r.succeed()
	if !same {
		logger.Info("Rules reloaded", "path", r.opts.Path, "reason", c.name, "rules", len(file.Rules))
	}
}

// succeed records a load of a valid file.
func (r *Reloader) succeed() {
	r.mu.Lock()
	r.failed = false
	r.mu.Unlock()
	r.record(metrics.Success)
}

// fail records and reports a load that failed with err. A file that could
// not be compiled because the API server could not be asked is not invalid:
// it is compiled again at the next look-up.
func (r *Reloader) fail(ctx context.Context, c cause, err error) {
	if errors.Is(err, ErrUnreachable) {
		r.record(metrics.Failure)
		klog.FromContext(ctx).Error(err, "Could not ask the API server; the previous rules are still enforced until it answers", "path", r.opts.Path, "reason", c.name, "retryIn", r.opts.RetryInterval)
		return
	}
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	r.record(metrics.Failure)
	klog.FromContext(ctx).Error(err, "Rules file invalid; the previous rules are still enforced", "path", r.opts.Path, "reason", c.name)
}

// apply compiles file against the cluster as it is now and, unless its
// rules conflict, makes it the file in force, applying the compiled set
// when it differs from the one in force — unless, when guard, the Guard
// holds it: then it returns the Guard's error as an errHeld.
func (r *Reloader) apply(ctx context.Context, file *rules.File, guard bool) error {
	r.opts.Reset()
	r.mu.Lock()
	r.lookedUp = time.Now()
	r.mu.Unlock()
	set, unresolved, err := resolve.Compile(r.opts.Path, file, r.opts.Resolve, r.opts.Schema, r.opts.Exclude)
	r.mu.Lock()
	r.unreachable, r.pending = errors.Is(err, ErrUnreachable), nil
	if r.unreachable && !file.Equal(r.file) {
		r.pending = file
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	r.mu.Lock()
	changed := !reflect.DeepEqual(set, r.set)
	r.mu.Unlock()
	if changed && guard {
		if err := r.opts.Guard(ctx, set); err != nil {
			return errHeld{err}
		}
	}
	r.mu.Lock()
	r.file, r.set, r.unresolved = file, set, unresolved
	r.mu.Unlock()
	r.report(ctx)
	if changed {
		r.opts.Apply(ctx, set)
	}
	r.gauges()
	return nil
}

// report logs the resources of the rules in force that are not served,
// unless they are those it logged last.
func (r *Reloader) report(ctx context.Context) {
	r.mu.Lock()
	unresolved := r.unresolved
	r.mu.Unlock()
	if slices.Equal(unresolved, r.reported) {
		return
	}
	r.reported = unresolved
	logger := klog.FromContext(ctx)
	for _, u := range unresolved {
		logger.Error(nil, "Resource not served; its rules are not enforced until it is", "field", u.Field, "reason", u.Message)
	}
}

// record counts a load of the file.
func (r *Reloader) record(result string) {
	m := r.opts.Metrics
	m.RulesReloads.WithLabelValues(result).Inc()
	if result == metrics.Success {
		m.RulesLastReloadSuccessful.Set(1)
	} else {
		m.RulesLastReloadSuccessful.Set(0)
	}
	r.gauges()
}

// gauges sets the metrics that describe the rules in force.
func (r *Reloader) gauges() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opts.Metrics.Rules.Set(float64(len(r.file.Rules)))
	r.opts.Metrics.ResourcesUnresolved.Set(float64(len(r.unresolved)))
}
