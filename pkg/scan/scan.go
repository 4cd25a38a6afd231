package scan

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/pager"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// PageSize is how many objects one list request asks for.
const PageSize = 500

// Change is one annotation or label that must change, and the rule that
// wants it.
type Change = reconcile.KeyChange

// Object is an object whose annotations must change.
type Object struct {
	// Resource is the resource as "resource.version.group".
	Resource  string   `json:"resource"`
	Namespace string   `json:"namespace,omitempty"`
	Name      string   `json:"name"`
	Changes   []Change `json:"changes"`
	// Audit is what rules in audit mode would change; nothing is written
	// for it.
	Audit []reconcile.AuditChange `json:"-"`
	// Requests are the writes that make the change, for reconcile.Writer.
	Requests []patch.Request `json:"-"`
}

// Visit is called for every object examined; pending is nil when the
// object already carries what the rules want (or is left alone) and no
// rule in audit mode would change it.
type Visit func(t *rules.Target, pending *Object) error

// Resource lists every object of t (in namespace, or all namespaces when
// namespace is "" or the resource is cluster-scoped) and calls visit for
// each, in list order, with what reconcile.Decide decided for it as the
// field manager manager, the objects its rules read besides the object
// found through look (Sources). It counts in unset the keys the rules
// could not compute.
func Resource(ctx context.Context, client dynamic.Interface, t *rules.Target, namespace, manager string, look source.Lookup, unset *Unset, visit Visit) error {
	return Decisions(ctx, client, t, namespace, manager, look, unset, func(u *unstructured.Unstructured, d reconcile.Decision) error {
		return visit(t, pending(t, u, d))
	})
}

// Decisions lists every object of t as Resource does and calls each with
// the object and the whole decision: what `coverage` reads of it.
func Decisions(ctx context.Context, client dynamic.Interface, t *rules.Target, namespace, manager string, look source.Lookup, unset *Unset,
	each func(*unstructured.Unstructured, reconcile.Decision) error) error {
	if !t.Namespaced {
		namespace = ""
	}
	ri := client.Resource(t.GVR).Namespace(namespace)
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return ri.List(ctx, opts)
	})
	p.PageSize = PageSize
	return p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("list %s: unexpected item %T", source.GVRString(t.GVR), obj)
		}
		d, err := reconcile.Decide(t, u, look, manager)
		if err != nil {
			return fmt.Errorf("encode patch for %s: %w", reconcile.Ref{GVR: t.GVR, Namespace: u.GetNamespace(), Name: u.GetName()}, err)
		}
		if d.Ignored == "" {
			unset.add(d.Evaluation)
		}
		return each(u, d)
	})
}

// pending describes what d changes on u, an object of t, and what rules
// in audit mode would change, or returns nil when there is neither.
func pending(t *rules.Target, u *unstructured.Unstructured, d reconcile.Decision) *Object {
	if d.Empty() && len(d.Audit) == 0 {
		return nil
	}
	return &Object{Resource: source.GVRString(t.GVR), Namespace: u.GetNamespace(), Name: u.GetName(),
		Changes: d.Changes(u), Audit: d.Audit, Requests: d.Requests}
}

// Unset counts, by rule and reason, the objects on which a rule could not
// compute the value of a key it sets (rules.Evaluation.Unset), as the
// controller's gauge kube_annotator_rule_unset_objects counts them. The
// zero Unset is ready to use, by several goroutines at once.
type Unset struct {
	mu sync.Mutex
	n  map[[2]string]int
}

// add counts the rules and reasons of ev, each once.
func (u *Unset) add(ev *rules.Evaluation) {
	if len(ev.Unset) == 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	seen := map[[2]string]bool{}
	for _, x := range ev.Unset {
		k := [2]string{x.Rule, x.Reason}
		if !seen[k] {
			seen[k] = true
			if u.n == nil {
				u.n = map[[2]string]int{}
			}
			u.n[k]++
		}
	}
}

// unsetWhy says, by reason, what happens to the keys.
var unsetWhy = map[string]string{
	rules.ReasonError:         "its expression failed; a value an object has is kept",
	rules.ReasonInvalid:       "the value is not valid for the key, which is not set",
	rules.ReasonSourceMissing: "the field or object it reads is absent, and the rule gives no default",
}

// Warnings returns one line a rule and reason, sorted:
// `rule cost: 2 objects: error (its expression failed; …)`.
func (u *Unset) Warnings() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, k := range slices.SortedFunc(maps.Keys(u.n), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), slices.Index(rules.Reasons, a[1])-slices.Index(rules.Reasons, b[1]))
	}) {
		out = append(out, fmt.Sprintf("rule %s: %d %s: %s (%s; explain shows why)", k[0], u.n[k], plural(u.n[k], "object"), k[1], unsetWhy[k[1]]))
	}
	return out
}

// plural is word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
