package policysync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	admissionv1 "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// TranslateFunc translates the rules in force into policies.
type TranslateFunc func(set *rules.Set) ([]admission.Policy, []admission.Note, error)

// ApplyFunc puts a set of rules in force, as the reloader's Apply does.
type ApplyFunc func(ctx context.Context, set *rules.Set)

// Options configure a Syncer.
type Options struct {
	// Client reaches the cluster's admissionregistration.k8s.io/v1.
	Client admissionv1.AdmissionregistrationV1Interface
	// FieldManager is the field manager whose policies these are; it
	// writes them.
	FieldManager string
	// Translate translates rules into policies.
	Translate TranslateFunc
	// Settle is how long to wait, after the policies changed, before the
	// controller applies the same rules: the API server takes up to a
	// second or so to load changed policies, and meanwhile a stale policy
	// would undo the controller's writes. Default 2s.
	Settle time.Duration
	// Interval is how often the policies are synced again, to repair
	// policies edited or deleted by hand; Retry how soon after a failed
	// sync. Defaults 30s and 2s.
	Interval, Retry time.Duration
}

// ErrNotServed is the error of a sync on an API server that does not serve
// MutatingAdmissionPolicy in admissionregistration.k8s.io/v1: Kubernetes
// 1.36 and later serve it; 1.35 serves only v1beta1, and only with its
// feature gate and runtime-config on.
var ErrNotServed = errors.New("this API server does not serve " + admission.Requirement)

// State is what the last sync found.
type State int

const (
	// Pending: no sync has run yet.
	Pending State = iota
	// Synced: the policies are those of the rules in force.
	Synced
	// Failed: the last sync failed; it is retried soon.
	Failed
	// NotServed: the API server does not serve the policies' API
	// (ErrNotServed); every rule is left to the controller, and the sync
	// is tried again every Interval, so that policies are installed once
	// the cluster is upgraded.
	NotServed
)

// String names the state, as metrics and probes show it.
func (st State) String() string {
	switch st {
	case Synced:
		return "synced"
	case Failed:
		return "failed"
	case NotServed:
		return "not-served"
	}
	return "pending"
}

// Syncer keeps the policies in sync. Create it with New.
type Syncer struct {
	opts     Options
	selector string

	mu    sync.Mutex
	set   *rules.Set // the rules in force; nil before the first Apply
	state State      // what the last sync found
	notes []string   // the notes last logged
	// missing says that the API was last found not served, and said so:
	// a failed sync in between (the API server restarting for an upgrade)
	// neither repeats nor forgets it.
	missing bool
}

// New returns a Syncer; Options.Client, FieldManager and Translate are
// required.
func New(opts Options) *Syncer {
	if opts.Settle <= 0 {
		opts.Settle = 2 * time.Second
	}
	if opts.Interval <= 0 {
		opts.Interval = 30 * time.Second
	}
	if opts.Retry <= 0 {
		opts.Retry = 2 * time.Second
	}
	return &Syncer{opts: opts,
		selector: labels.Set{admission.ManagedByLabel: admission.ManagedBy, admission.FieldManagerLabel: opts.FieldManager}.String()}
}

// Wrap returns an ApplyFunc that syncs the policies to set, waits for the
// API server to load them if they changed, and then calls next. A sync
// that fails is logged and retried by Run; next is called all the same.
func (s *Syncer) Wrap(next ApplyFunc) ApplyFunc {
	return func(ctx context.Context, set *rules.Set) {
		s.mu.Lock()
		s.set = set
		s.mu.Unlock()
		if changed := s.syncSet(ctx, set); changed {
			select {
			case <-time.After(s.opts.Settle):
			case <-ctx.Done():
			}
		}
		next(ctx, set)
	}
}

// Run syncs the policies again every Interval, and Retry after a failure,
// until ctx ends.
func (s *Syncer) Run(ctx context.Context) {
	t := time.NewTimer(s.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		set := s.set
		s.mu.Unlock()
		if set != nil {
			s.syncSet(ctx, set)
		}
		next := s.opts.Interval
		if s.State() == Failed {
			next = s.opts.Retry
		}
		t.Reset(next)
	}
}

// syncSet translates set and syncs the policies, logging what is left to
// the controller when it changes and any error; it reports whether the
// cluster's policies changed.
func (s *Syncer) syncSet(ctx context.Context, set *rules.Set) bool {
	logger := klog.FromContext(ctx)
	policies, notes, err := s.opts.Translate(set)
	if err == nil {
		s.report(ctx, notes)
		var changed bool
		if changed, err = s.Sync(ctx, policies); err == nil {
			if s.setState(Synced, false) {
				logger.Info("Admission policies now served by the API server; installing them")
			}
			if changed {
				logger.Info("Admission policies synced", "policies", len(policies))
			}
			return changed
		}
	}
	if errors.Is(err, ErrNotServed) {
		// Said once, not every Retry: the server will not change until
		// the cluster is upgraded.
		if !s.setState(NotServed, true) {
			logger.Info("Admission policies not installed; the controller enforces every rule after objects are created",
				"reason", ErrNotServed.Error(), "checkEvery", s.opts.Interval)
		}
		return false
	}
	s.mu.Lock()
	s.state = Failed
	s.mu.Unlock()
	logger.Error(err, "Admission policies not synced; the controller still enforces every rule", "retryIn", s.opts.Retry)
	return false
}

// setState records what the last sync found, and whether the API is
// missing; it returns whether it was missing before.
func (s *Syncer) setState(st State, missing bool) (wasMissing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wasMissing = s.missing
	s.state, s.missing = st, missing
	return wasMissing
}

// State returns what the last sync found, for metrics and probes.
func (s *Syncer) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// report logs notes unless they are those it logged last.
func (s *Syncer) report(ctx context.Context, notes []admission.Note) {
	var lines []string
	for _, n := range notes {
		lines = append(lines, n.String())
	}
	s.mu.Lock()
	same := slices.Equal(lines, s.notes)
	s.notes = lines
	s.mu.Unlock()
	if same {
		return
	}
	for _, l := range lines {
		klog.FromContext(ctx).Info("Not applied at admission; the controller enforces it", "note", l)
	}
}

// Sync makes the field manager's policies and bindings in the cluster
// exactly policies: each is applied (server-side apply, forced, as the
// field manager), and those of the field manager that are not in policies
// are deleted. changed reports whether anything in the cluster changed.
func (s *Syncer) Sync(ctx context.Context, policies []admission.Policy) (changed bool, err error) {
	list := metav1.ListOptions{LabelSelector: s.selector}
	have, err := s.opts.Client.MutatingAdmissionPolicies().List(ctx, list)
	if apierrors.IsNotFound(err) {
		// A list is NotFound only when the resource is not served.
		return false, fmt.Errorf("list admission policies: %w: %w", ErrNotServed, err)
	}
	if err != nil {
		return false, fmt.Errorf("list admission policies: %w", err)
	}
	haveBindings, err := s.opts.Client.MutatingAdmissionPolicyBindings().List(ctx, list)
	if err != nil {
		return false, fmt.Errorf("list admission policy bindings: %w", err)
	}
	states := map[string]string{}
	for i := range have.Items {
		states["policy/"+have.Items[i].Name] = state(&have.Items[i])
	}
	for i := range haveBindings.Items {
		states["binding/"+haveBindings.Items[i].Name] = state(&haveBindings.Items[i])
	}
	wanted := map[string]bool{}
	for _, p := range policies {
		// The policy first: a binding to a missing policy is ignored.
		for _, obj := range []runtime.Object{p.Policy, p.Binding} {
			kind, after, err := s.apply(ctx, obj)
			if err != nil {
				return changed, err
			}
			key := kind + "/" + p.Policy.Name
			wanted[key] = true
			before, existed := states[key]
			changed = changed || !existed || before != after
		}
	}
	// Bindings first: a policy without its binding does nothing.
	for _, b := range haveBindings.Items {
		if !wanted["binding/"+b.Name] {
			err = errors.Join(err, ignoreNotFound(s.opts.Client.MutatingAdmissionPolicyBindings().Delete(ctx, b.Name, metav1.DeleteOptions{})))
			changed = true
		}
	}
	for _, p := range have.Items {
		if !wanted["policy/"+p.Name] {
			err = errors.Join(err, ignoreNotFound(s.opts.Client.MutatingAdmissionPolicies().Delete(ctx, p.Name, metav1.DeleteOptions{})))
			changed = true
		}
	}
	if err != nil {
		return changed, fmt.Errorf("delete admission policies no rule asks for: %w", err)
	}
	return changed, nil
}

// apply server-side applies obj, a policy or a binding, and returns its
// kind ("policy" or "binding") and its state after the apply.
func (s *Syncer) apply(ctx context.Context, obj runtime.Object) (kind, after string, err error) {
	u, err := admission.Unstructured(obj)
	if err != nil {
		return "", "", err
	}
	body, err := json.Marshal(u.Object)
	if err != nil {
		return "", "", err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: s.opts.FieldManager, Force: &force}
	name := u.GetName()
	var out any
	switch u.GetKind() {
	case "MutatingAdmissionPolicy":
		kind = "policy"
		out, err = s.opts.Client.MutatingAdmissionPolicies().Patch(ctx, name, types.ApplyPatchType, body, opts)
	default:
		kind = "binding"
		out, err = s.opts.Client.MutatingAdmissionPolicyBindings().Patch(ctx, name, types.ApplyPatchType, body, opts)
	}
	if err != nil {
		return "", "", fmt.Errorf("apply %s %s: %w", u.GetKind(), name, err)
	}
	return kind, state(out), nil
}

// state is what of a policy or binding the rules decide, its labels and
// spec, as the API server returned it (defaults included), for comparison.
func state(obj any) string {
	var v struct {
		Labels map[string]string
		Spec   any
	}
	switch o := obj.(type) {
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		v.Labels, v.Spec = o.Labels, o.Spec
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		v.Labels, v.Spec = o.Labels, o.Spec
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain API types
	}
	return string(b)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
