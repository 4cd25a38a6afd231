package explain

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// Object is explain's answer for one object, as -o json and -o yaml
// print it.
type Object struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	reconcile.Explanation
	// Fight is the last fight over the object the controller reported,
	// if any; FightUnknown says why explain cannot tell.
	Fight        *Fight `json:"fight,omitempty"`
	FightUnknown string `json:"fightUnknown,omitempty"`
}

// Named explains the objects named name of t through a client of the API
// server at cfg, for a controller writing as manager: of a namespaced
// resource, the one in the namespace that namespace returns or, with no
// namespace func, each in every namespace.
func Named(ctx context.Context, cfg *rest.Config, t *rules.Target, name, manager string, namespace func() (string, error)) ([]*Object, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	namespaces := []string{""}
	switch {
	case t.Namespaced && namespace == nil:
		namespaces, err = NamespacesOf(ctx, dyn, t.GVR, name)
	case t.Namespaced:
		namespaces[0], err = namespace()
	}
	if err != nil {
		return nil, err
	}
	return Objects(ctx, dyn, t, namespaces, name, manager)
}

// Objects explains the object name of t in each of namespaces ("" for a
// cluster-scoped resource), one after another, for a controller writing
// as manager.
func Objects(ctx context.Context, dyn dynamic.Interface, t *rules.Target, namespaces []string, name, manager string) ([]*Object, error) {
	var out []*Object
	for _, ns := range namespaces {
		x, err := explainIn(ctx, dyn, t, ns, name, manager)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// NamespacesOf lists the namespaces that hold an object of gvr named name;
// none is an error.
func NamespacesOf(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, name string) ([]string, error) {
	list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return nil, fmt.Errorf("list %s named %q: %w", source.GVRString(gvr), name, err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("%s %q not found in any namespace", source.GVRString(gvr), name)
	}
	out := make([]string, 0, len(list.Items))
	for _, o := range list.Items {
		out = append(out, o.GetNamespace())
	}
	return out, nil
}

// explainIn explains the object name of t in namespace ns ("" for a
// cluster-scoped resource), for a controller writing as manager.
func explainIn(ctx context.Context, dyn dynamic.Interface, t *rules.Target, ns, name, manager string) (*Object, error) {
	ref := reconcile.Ref{GVR: t.GVR, Namespace: ns, Name: name}
	obj, err := dyn.Resource(t.GVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s not found", ref)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", ref, err)
	}
	look, err := scan.SourcesOf(ctx, dyn, t, obj)
	if err != nil {
		return nil, err
	}
	x, err := reconcile.Explain(t, obj, look, manager)
	if err != nil {
		return nil, fmt.Errorf("explain %s: %w", ref, err)
	}
	out := &Object{Resource: source.GVRString(t.GVR), Namespace: ns, Name: name, Explanation: x}
	if out.Fight, err = FightOf(ctx, dyn, ns, obj.GetUID(), time.Now()); err != nil {
		out.FightUnknown = err.Error()
	}
	return out, nil
}

// TargetOf returns the target of set for gr, at whatever version the
// rules named it, or nil.
func TargetOf(set *rules.Set, gr schema.GroupResource) *rules.Target {
	for gvr, t := range set.Targets {
		if gvr.GroupResource() == gr {
			return t
		}
	}
	return nil
}
