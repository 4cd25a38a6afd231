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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// Namespaces lists the namespaces once, when set needs them, and returns
// what its rules read of them: the namespaces by name for rules that
// select by namespace labels or read values from namespaces
// (fromNamespace), and those that opt out (rules.IgnoreAnnotation) when
// set rules a namespaced resource. Either is nil when no rule needs it.
func Namespaces(ctx context.Context, client dynamic.Interface, set *rules.Set) (rules.Namespaces, rules.IgnoredNamespaces, error) {
	targets := slices.Collect(maps.Values(set.Targets))
	byLabels := slices.ContainsFunc(targets, func(t *rules.Target) bool { return t.NeedsNamespaceLabels || t.ReadsNamespaces })
	byOptOut := slices.ContainsFunc(targets, func(t *rules.Target) bool { return t.Namespaced })
	if !byLabels && !byOptOut {
		return nil, nil, nil
	}
	why := rules.IgnoreAnnotation
	if byLabels {
		why = "namespaceSelector and fromNamespace"
	}
	list, err := listNamespaces(ctx, client, why)
	if err != nil {
		return nil, nil, err
	}
	var lookup rules.Namespaces
	if byLabels {
		byName := make(map[string]metav1.Object, len(list.Items))
		for i := range list.Items {
			byName[list.Items[i].GetName()] = &list.Items[i]
		}
		lookup = func(name string) (metav1.Object, bool) {
			ns, ok := byName[name]
			return ns, ok
		}
	}
	var ignored rules.IgnoredNamespaces
	if byOptOut {
		out := map[string]bool{}
		for _, ns := range list.Items {
			if rules.OptsOut(ns.GetAnnotations()) {
				out[ns.GetName()] = true
			}
		}
		ignored = func(name string) bool { return out[name] }
	}
	return lookup, ignored, nil
}

func listNamespaces(ctx context.Context, client dynamic.Interface, why string) (*unstructured.UnstructuredList, error) {
	list, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list namespaces for %s: %w", why, err)
	}
	return list, nil
}

// Namespace reads namespace ns ("" for none) once and answers for it as
// Namespaces does for all, as the controller's namespace informer would:
// for explain, which reads one object.
func Namespace(ctx context.Context, dyn dynamic.Interface, ns string) (rules.Namespaces, rules.IgnoredNamespaces, error) {
	if ns == "" {
		return nil, nil, nil
	}
	got, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("get namespace %s: %w", ns, err)
	}
	nsLabels := func(name string) (metav1.Object, bool) {
		return got, name == ns
	}
	nsIgnored := func(name string) bool { return name == ns && rules.OptsOut(got.GetAnnotations()) }
	return nsLabels, nsIgnored, nil
}
