// Package scan lists every object of the ruled resources once and reports,
// as package reconcile decides it, which annotations and labels each must
// change: the one-shot counterpart of the controller's informers, used by
// `once` and `diff`. It never writes.
package scan

import (
	"context"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/pager"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
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
// field manager manager.
func Resource(ctx context.Context, client dynamic.Interface, t *rules.Target, namespace, manager string, nsLabels rules.Namespaces, nsIgnored rules.IgnoredNamespaces, visit Visit) error {
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
			return fmt.Errorf("list %s: unexpected item %T", rules.GVRString(t.GVR), obj)
		}
		d, err := reconcile.Decide(t, u, nsLabels, nsIgnored, manager)
		if err != nil {
			return fmt.Errorf("encode patch for %s: %w", reconcile.Ref{GVR: t.GVR, Namespace: u.GetNamespace(), Name: u.GetName()}, err)
		}
		return visit(t, pending(t, u, d))
	})
}

// pending describes what d changes on u, an object of t, and what rules
// in audit mode would change, or returns nil when there is neither.
func pending(t *rules.Target, u *unstructured.Unstructured, d reconcile.Decision) *Object {
	if d.Empty() && len(d.Audit) == 0 {
		return nil
	}
	return &Object{Resource: rules.GVRString(t.GVR), Namespace: u.GetNamespace(), Name: u.GetName(),
		Changes: d.Changes(u), Audit: d.Audit, Requests: d.Requests}
}

// NamespaceLabels lists the namespaces once, for rules that select by
// namespace labels or read values from namespaces (fromNamespace), when
// set has such rules; otherwise it returns nil.
func NamespaceLabels(ctx context.Context, client dynamic.Interface, set *rules.Set) (rules.Namespaces, error) {
	if !slices.ContainsFunc(slices.Collect(maps.Values(set.Targets)), func(t *rules.Target) bool { return t.NeedsNamespaceLabels || t.ReadsNamespaces }) {
		return nil, nil
	}
	list, err := listNamespaces(ctx, client, "namespaceSelector and fromNamespace")
	if err != nil {
		return nil, err
	}
	byName := make(map[string]metav1.Object, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].GetName()] = &list.Items[i]
	}
	return func(name string) (metav1.Object, bool) {
		ns, ok := byName[name]
		return ns, ok
	}, nil
}

// IgnoredNamespaces lists the namespaces once, when set rules a namespaced
// resource, and returns those that opt out (rules.IgnoreAnnotation);
// otherwise it returns nil.
func IgnoredNamespaces(ctx context.Context, client dynamic.Interface, set *rules.Set) (rules.IgnoredNamespaces, error) {
	if !slices.ContainsFunc(slices.Collect(maps.Values(set.Targets)), func(t *rules.Target) bool { return t.Namespaced }) {
		return nil, nil
	}
	list, err := listNamespaces(ctx, client, rules.IgnoreAnnotation)
	if err != nil {
		return nil, err
	}
	ignored := map[string]bool{}
	for _, ns := range list.Items {
		if rules.OptsOut(ns.GetAnnotations()) {
			ignored[ns.GetName()] = true
		}
	}
	return func(name string) bool { return ignored[name] }, nil
}

// listNamespaces lists every namespace; why says what for, in errors.
func listNamespaces(ctx context.Context, client dynamic.Interface, why string) (*unstructured.UnstructuredList, error) {
	list, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list namespaces for %s: %w", why, err)
	}
	return list, nil
}
