package scan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
// field manager manager, the objects its rules read besides the object
// found through look (Sources).
func Resource(ctx context.Context, client dynamic.Interface, t *rules.Target, namespace, manager string, look rules.Lookup, visit Visit) error {
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
		d, err := reconcile.Decide(t, u, look, manager)
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
