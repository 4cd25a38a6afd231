package reloader

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/lint"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
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
	Schema lint.SchemaFunc
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
	// Tenants, when set, gives the tenants' rules files, merged with the
	// main file's rules when it has a tenants section; nil ignores them.
	Tenants Tenants
	// Pace, when set, is told the tenants' writesPerSecond and the
	// namespaces whose tenants have rules in force whenever rules are put
	// in force (0 and none without a tenants section).
	Pace func(perSecond int, tenants []string)
	// Changed counts, in each of namespaces, the objects set would change
	// otherwise than before would (a controller's Changed), for the
	// tenants section's maxChanges; when nil, no tenant's file is held.
	Changed func(before, set *rules.Set, namespaces []string) map[string]int
}

// Reloader owns the rules in force. Create it with New; Run it.
type Reloader struct {
	opts Options

	mu sync.Mutex
	// file, set and unresolved are the rules in force.
	file       *rulefile.File
	set        *rules.Set
	unresolved []rulefile.FieldError
	// state is the rules file's, as last read; setState changes it.
	state    fileState
	lookedUp time.Time // when the resources were last resolved
	// unreachable is set while the last compile could not ask the API
	// server: the resources are then looked up again a RetryInterval later.
	unreachable bool

	// checked are the tenants' files as last checked, by namespace;
	// inForce the tenants' results in force.
	checked map[string]checked
	inForce map[string]inForce

	// reported are the unresolved resources last logged. Only Run's
	// goroutine uses it.
	reported []rulefile.FieldError
}

// New returns a Reloader whose rules in force are file, compiled just now
// (by resolve.Compile, with opts.Resolve and opts.Exclude) into set, with
// unresolved names not served. Apply and Resolve are required; the other
// options have defaults.
func New(opts Options, file *rulefile.File, set *rules.Set, unresolved []rulefile.FieldError) *Reloader {
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
	r.mu.Lock()
	r.describe() // the caller loaded file; Run counts its loads
	r.mu.Unlock()
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
	debounce, tenantsDebounce := time.NewTimer(time.Hour), time.NewTimer(time.Hour)
	debounce.Stop()
	tenantsDebounce.Stop()
	var tenantsChanged <-chan struct{}
	if r.opts.Tenants != nil {
		tenantsChanged = r.opts.Tenants.Changed()
	}
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
		case <-tenantsChanged:
			tenantsDebounce.Reset(100 * time.Millisecond)
		case <-tenantsDebounce.C:
			r.recompose(ctx)
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

// untilLookUp is how long until the resources are next looked up: an
// interval after they last were, short while some are not served, so that a
// CRD installed now is picked up within seconds.
func (r *Reloader) untilLookUp() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	interval := r.opts.Interval
	if len(r.unresolved) > 0 || r.unreachable || r.state.phase == waiting {
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
	// always loads the file although its content is what was last read.
	always bool
}

var (
	atStart     = cause{name: "start", count: true, always: true}
	fileChanged = cause{name: "file changed", guard: true}
	hangUp      = cause{name: "SIGHUP", resolve: true, count: true, guard: true, always: true}
	// retried compiles again a file that could not be compiled earlier
	// because the API server could not be asked, guarded as a reload of a
	// changed file would have been.
	retried = cause{name: "retry after the API server could not be asked", resolve: true, guard: true, always: true}
)

// reload reads and loads the file. A file whose content is what was last
// read changed nothing, and does nothing, unless c says to load it always.
func (r *Reloader) reload(ctx context.Context, c cause) {
	content, err := readFile(r.opts.Path)
	r.mu.Lock()
	prev := r.state
	r.mu.Unlock()
	if !c.always && err == nil && prev.content != nil && bytes.Equal(content, prev.content) {
		return // another event of the same write, or of a file next to it
	}
	var file *rulefile.File
	if err == nil {
		file, err = rules.Parse(r.opts.Path, content)
	}
	if err != nil {
		r.setState(ctx, change{next: fileState{phase: invalid, content: content, reason: err}, cause: c, result: metrics.Failure})
		return
	}
	r.setState(ctx, r.load(ctx, file, content, c, prev))
}

// load puts file, read as content for cause c, in force unless it leaves
// the rules as they are, the Guard holds it, or its rules conflict; prev
// is the file's state before. It returns the change it made.
func (r *Reloader) load(ctx context.Context, file *rulefile.File, content []byte, c cause, prev fileState) change {
	r.mu.Lock()
	same := file.Equal(r.file)
	if same {
		r.file = file // the same rules, at the lines errors now name
	}
	r.mu.Unlock()
	ch := change{next: fileState{phase: enforced, content: content}, cause: c}
	if same && !c.resolve {
		if prev.phase == invalid || c.count {
			ch.result = metrics.Success
		}
		return ch
	}
	ch.confirmed = c == hangUp && prev.phase == held && file.Equal(prev.candidate)
	var isHeld errHeld
	switch err := r.apply(ctx, file, c.guard && !ch.confirmed); {
	case errors.As(err, &isHeld):
		ch.next = fileState{phase: held, content: content, candidate: file, reason: isHeld.error}
	case errors.Is(err, ErrUnreachable):
		ch.next = fileState{phase: waiting, content: content, candidate: file, reason: err}
		ch.result = metrics.Failure
	case err != nil:
		ch.next = fileState{phase: invalid, content: content, reason: err}
		ch.result = metrics.Failure
	default:
		ch.result, ch.applied = metrics.Success, !same
	}
	return ch
}

// apply compiles file against the cluster as it is now and, unless its
// rules conflict, makes it the file in force, applying the compiled set
// when it differs from the one in force — unless, when guard, the Guard
// holds it: then it returns the Guard's error as an errHeld.
func (r *Reloader) apply(ctx context.Context, file *rulefile.File, guard bool) error {
	r.opts.Reset()
	r.mu.Lock()
	r.lookedUp = time.Now()
	r.mu.Unlock()
	return r.applyCompiled(ctx, file, guard)
}

// applyCompiled is apply with the resources resolved as last looked up.
func (r *Reloader) applyCompiled(ctx context.Context, file *rulefile.File, guard bool) error {
	set, unresolved, results, err := r.compile(ctx, file, true)
	r.mu.Lock()
	r.unreachable = errors.Is(err, ErrUnreachable)
	changed := err == nil && !reflect.DeepEqual(set, r.set)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if changed && guard {
		if err := r.opts.Guard(ctx, set); err != nil {
			return errHeld{err}
		}
	}
	r.mu.Lock()
	r.file, r.set, r.unresolved = file, set, unresolved
	r.describe()
	r.mu.Unlock()
	r.report(ctx)
	if changed {
		r.opts.Apply(ctx, set)
	}
	r.putInForce(results)
	r.pace(file, results)
	if results != nil {
		r.opts.Tenants.Report(ctx, results)
	}
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
