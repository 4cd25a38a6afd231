// Package scan lists every object of the ruled resources once and reports
// which annotations each would have changed: the one-shot counterpart of
// the controller, used by `once` and `diff`. It never writes.
package scan

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/pager"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// PageSize is how many objects one list request asks for.
const PageSize = 500

// Change is one annotation that must change.
type Change struct {
	Key string `json:"key"`
	// Old is the current value; nil when the annotation is missing.
	Old *string `json:"old"`
	New string  `json:"new"`
}

// Object is an object whose annotations must change.
type Object struct {
	// Resource is the resource as "resource.version.group".
	Resource  string   `json:"resource"`
	Namespace string   `json:"namespace,omitempty"`
	Name      string   `json:"name"`
	Changes   []Change `json:"changes"`
	// Patch is the merge patch that makes the change.
	Patch []byte `json:"-"`
}

// Visit is called for every object examined; pending is nil when the
// object already carries what the rules want.
type Visit func(t *rules.Target, pending *Object) error

// Resource lists every object of t (in namespace, or all namespaces when
// namespace is "" or the resource is cluster-scoped) and calls visit for
// each, in list order.
func Resource(ctx context.Context, client dynamic.Interface, t *rules.Target, namespace string, visit Visit) error {
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
		pending, err := Pending(t, u)
		if err != nil {
			return err
		}
		return visit(t, pending)
	})
}

// Pending returns what must change on u for t, or nil when nothing must.
func Pending(t *rules.Target, u *unstructured.Unstructured) (*Object, error) {
	current, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "annotations")
	currentMap, _ := current.(map[string]any)
	changed := patch.Annotations(currentMap, t.Annotations)
	if len(changed) == 0 {
		return nil, nil
	}
	data, err := patch.MergePatch(changed)
	if err != nil {
		return nil, err
	}
	o := &Object{Resource: rules.GVRString(t.GVR), Namespace: u.GetNamespace(), Name: u.GetName(), Patch: data}
	for k, v := range changed {
		c := Change{Key: k, New: v}
		if old, ok := currentMap[k].(string); ok {
			c.Old = &old
		}
		o.Changes = append(o.Changes, c)
	}
	slices.SortFunc(o.Changes, func(a, b Change) int { return cmp.Compare(a.Key, b.Key) })
	return o, nil
}
