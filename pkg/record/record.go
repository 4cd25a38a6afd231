package record

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// Keys of the record ConfigMap.
const (
	// ManagedByLabel, set to ManagedBy, marks a ConfigMap as a record; a
	// ConfigMap of the record's name without it is never used.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "kube-annotator"
	// FieldManagerKey holds the field manager the record belongs to.
	FieldManagerKey = "fieldManager"
	// ResourcesKey holds the entries, one a line.
	ResourcesKey = "resources"
	// Writer is the field manager records are written as. It is not the
	// field manager a record belongs to: were the record written as that
	// one, a controller whose rules name configmaps would take the
	// record's label for a key it set, and prune it.
	Writer = "kube-annotator-record"
	// StatusWriter is the field manager the status annotation of a
	// tenant's rules ConfigMap is written as, for the same reason: a
	// controller whose tenants' rules name configmaps would otherwise
	// prune its own status.
	StatusWriter = "kube-annotator-tenant-status"
)

// Name is the name of the record of the field manager manager:
// "<manager>-resources". It is derived rather than configured so that
// every command run as one field manager (run, once, diff, rbac) finds the
// same record without another flag, and so that two field managers never
// share one; next to deploy/'s ConfigMap of rules, kube-annotator-rules,
// the default kube-annotator-resources reads as what it is.
func Name(manager string) string { return manager + "-resources" }

// ValidateFieldManager reports why manager cannot be a field manager with
// a record: the API server refuses it as a field manager, or Name(manager)
// is not a valid ConfigMap name.
func ValidateFieldManager(manager string) error {
	if manager == "" {
		return errors.New("must not be empty")
	}
	if manager == Writer {
		return fmt.Errorf("%q is the field manager records are written as", Writer)
	}
	if manager == StatusWriter {
		return fmt.Errorf("%q is the field manager tenants' status annotations are written as", StatusWriter)
	}
	if errs := metavalidation.ValidateFieldManager(manager, field.NewPath("fieldManager")); len(errs) > 0 {
		return errors.New(errs[0].Detail)
	}
	if errs := validation.IsDNS1123Subdomain(Name(manager)); len(errs) > 0 {
		return fmt.Errorf("%q would name the record ConfigMap %q, which is not a valid name: %s", manager, Name(manager), strings.Join(errs, "; "))
	}
	return nil
}

// Entry is one line of the record: a resource written by a process of one
// scope.
type Entry struct {
	Resource schema.GroupResource
	// Namespace is the namespace the writing process was limited to; ""
	// when it watched every namespace.
	Namespace string
}

// String formats the entry as a line of the record.
func (e Entry) String() string {
	if e.Namespace == "" {
		return e.Resource.String()
	}
	return e.Resource.String() + " -n " + e.Namespace
}

// Record is the record of one field manager, as seen by a process of one
// scope. Its methods are safe for concurrent use.
type Record struct {
	client                   corev1client.ConfigMapInterface
	namespace, name, manager string
	scope                    string

	// write serialises reading and writing the ConfigMap.
	write sync.Mutex
	mu    sync.RWMutex
	// entries are the record as last read or written.
	entries map[Entry]bool
	// failed is the error of the last update, nil once one succeeds.
	failed error
	// observe is told the outcome of every update.
	observe func(error)
}

// Open returns the record of manager in namespace, for a process limited
// to the namespace scope ("" for every namespace), read through a client
// of the API server at cfg.
func Open(ctx context.Context, cfg *rest.Config, namespace, manager, scope string) (*Record, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	rec := New(cs.CoreV1(), namespace, manager, scope)
	if err := rec.Load(ctx); err != nil {
		return nil, err
	}
	return rec, nil
}

// New returns the record of manager, the ConfigMap Name(manager) in
// namespace, for a process limited to the namespace scope ("" for every
// namespace). It reads nothing: call Load.
func New(client corev1client.ConfigMapsGetter, namespace, manager, scope string) *Record {
	return &Record{client: client.ConfigMaps(namespace), namespace: namespace, name: Name(manager),
		manager: manager, scope: scope, entries: map[Entry]bool{}}
}

// ErrNotRecord is what the errors of Load, Open, Ensure and Remove match,
// with errors.Is, when the record's ConfigMap exists but is not a record:
// it is someone else's, to delete, or the field manager is to change.
var ErrNotRecord = errors.New("the ConfigMap exists but is not a record")

// Ref names the record's ConfigMap as "namespace/name".
func (r *Record) Ref() string { return r.namespace + "/" + r.name }

// Load reads the record from the cluster; a record that does not exist is
// empty. It fails when the ConfigMap is not a record, or is the record of
// another field manager.
func (r *Record) Load(ctx context.Context) error {
	r.write.Lock()
	defer r.write.Unlock()
	_, entries, err := r.read(ctx)
	if err != nil {
		return err
	}
	r.set(entries)
	return nil
}

// Ensure records that the process writes to gr, unless the record says so
// already. Call it before the first write to gr: when it fails, do not
// write.
func (r *Record) Ensure(ctx context.Context, gr schema.GroupResource) error {
	e := Entry{Resource: gr, Namespace: r.scope}
	if r.has(e) {
		return nil
	}
	r.write.Lock()
	defer r.write.Unlock()
	if r.has(e) {
		return nil
	}
	return r.update(ctx, func(entries map[Entry]bool) bool {
		if entries[e] {
			return false
		}
		entries[e] = true
		return true
	})
}

// Remove removes gr from the record once the process has pruned it: the
// line of its scope, or, for a process that watches every namespace, every
// line of gr.
func (r *Record) Remove(ctx context.Context, gr schema.GroupResource) error {
	r.write.Lock()
	defer r.write.Unlock()
	return r.update(ctx, func(entries map[Entry]bool) bool {
		removed := false
		for e := range entries {
			if e.Resource == gr && (r.scope == "" || e.Namespace == r.scope) {
				delete(entries, e)
				removed = true
			}
		}
		return removed
	})
}

// Recorded returns, sorted, the resources that the process's scope
// prunes: those of the lines of its scope, or every resource recorded for
// a process that watches every namespace.
func (r *Record) Recorded() []schema.GroupResource {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []schema.GroupResource
	for e := range r.entries {
		if (r.scope == "" || e.Namespace == r.scope) && !slices.Contains(out, e.Resource) {
			out = append(out, e.Resource)
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupResource) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Observe has observe told the outcome of every attempt to change the
// record (nil when it succeeded), after its retries of conflicts.
func (r *Record) Observe(observe func(error)) {
	r.mu.Lock()
	r.observe = observe
	r.mu.Unlock()
}

// WriteError returns the error of the last attempt to change the record,
// or nil when it succeeded or none was made. While it is not nil, the
// resource the attempt was for is not written to: Ensure failed.
func (r *Record) WriteError() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.failed
}

func (r *Record) has(e Entry) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.entries[e]
}

func (r *Record) set(entries map[Entry]bool) {
	r.mu.Lock()
	r.entries = entries
	r.mu.Unlock()
}

// update reads the record, lets mutate change its entries, and writes it
// back if mutate says it changed them, retrying when another process wrote
// it meanwhile; it keeps and reports the outcome. r.write is held.
func (r *Record) update(ctx context.Context, mutate func(map[Entry]bool) bool) error {
	err := r.tryUpdate(ctx, mutate)
	r.mu.Lock()
	r.failed = err
	observe := r.observe
	r.mu.Unlock()
	if observe != nil {
		observe(err)
	}
	return err
}

// tryUpdate is update, without keeping the outcome.
func (r *Record) tryUpdate(ctx context.Context, mutate func(map[Entry]bool) bool) error {
	conflict := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	return retry.OnError(retry.DefaultRetry, conflict, func() error {
		cm, entries, err := r.read(ctx)
		if err != nil {
			return err
		}
		if !mutate(entries) {
			r.set(entries)
			return nil
		}
		if cm == nil {
			// Opted out of every rule: a rule on configmaps would otherwise
			// annotate the record, and another controller prune that.
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.namespace,
				Labels: map[string]string{ManagedByLabel: ManagedBy}, Annotations: map[string]string{rulefile.IgnoreAnnotation: "true"}}}
			cm.Data = encode(nil, r.manager, entries)
			_, err = r.client.Create(ctx, cm, metav1.CreateOptions{FieldManager: Writer})
		} else {
			cm.Data = encode(cm.Data, r.manager, entries)
			_, err = r.client.Update(ctx, cm, metav1.UpdateOptions{FieldManager: Writer})
		}
		if err != nil {
			return fmt.Errorf("record %s: %w", r.Ref(), err)
		}
		r.set(entries)
		return nil
	})
}

// read returns the record's ConfigMap, nil when there is none, and its
// entries.
func (r *Record) read(ctx context.Context) (*corev1.ConfigMap, map[Entry]bool, error) {
	cm, err := r.client.Get(ctx, r.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, map[Entry]bool{}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("record %s: %w", r.Ref(), err)
	}
	if cm.Labels[ManagedByLabel] != ManagedBy {
		return nil, nil, fmt.Errorf("record %s: %w (it lacks the label %s=%s); delete it, or choose another field manager",
			r.Ref(), ErrNotRecord, ManagedByLabel, ManagedBy)
	}
	if got := cm.Data[FieldManagerKey]; got != r.manager {
		return nil, nil, fmt.Errorf("record %s: data.%s is %q, not %q: refusing to use another field manager's record", r.Ref(), FieldManagerKey, got, r.manager)
	}
	if err := checkFormat(cm.Data[FormatKey]); err != nil {
		return nil, nil, fmt.Errorf("record %s: %w", r.Ref(), err)
	}
	entries, err := parse(cm.Data[ResourcesKey])
	if err != nil {
		return nil, nil, fmt.Errorf("record %s: data.%s: %w", r.Ref(), ResourcesKey, err)
	}
	return cm, entries, nil
}

// parse reads the entries of the resources key: one a line, "RESOURCE" or
// "RESOURCE -n NAMESPACE"; blank lines are ignored.
func parse(text string) (map[Entry]bool, error) {
	entries := map[Entry]bool{}
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		e := Entry{Resource: schema.ParseGroupResource(f[0])}
		switch {
		case len(f) == 3 && f[1] == "-n" && len(validation.IsDNS1123Label(f[2])) == 0:
			e.Namespace = f[2]
		case len(f) != 1:
			return nil, fmt.Errorf("line %d: %q: want RESOURCE[.GROUP] or RESOURCE[.GROUP] -n NAMESPACE", i+1, line)
		}
		if e.Resource.Resource == "" || strings.HasPrefix(f[0], ".") {
			return nil, fmt.Errorf("line %d: %q: no resource", i+1, line)
		}
		entries[e] = true
	}
	return entries, nil
}

// encode returns data, a copy, with the record's keys set to Format,
// manager and entries, sorted one a line.
func encode(data map[string]string, manager string, entries map[Entry]bool) map[string]string {
	lines := make([]string, 0, len(entries))
	for e := range entries {
		lines = append(lines, e.String()+"\n")
	}
	slices.Sort(lines)
	out := make(map[string]string, len(data)+3)
	maps.Copy(out, data)
	out[FormatKey] = Format
	out[FieldManagerKey] = manager
	out[ResourcesKey] = strings.Join(lines, "")
	return out
}
