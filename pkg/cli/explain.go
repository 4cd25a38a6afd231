package cli

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/spf13/cobra"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// explained is explain's answer for one object, as -o json and -o yaml
// print it.
type explained struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	reconcile.Explanation
	// Fight is the last fight over the object the controller reported,
	// if any; FightUnknown says why explain cannot tell.
	Fight        *fightSeen `json:"fight,omitempty"`
	FightUnknown string     `json:"fightUnknown,omitempty"`
}

func (e *env) newExplainCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "explain RESOURCE/NAME",
		Short: "Explain what the rules make of one object, and why",
		Long: "Explain one object: every rule of its resource and whether it selects the object (if not, why),\n" +
			"the keys each selecting rule wants, who owns each annotation and label (managedFields), conflicts,\n" +
			"and what run would change. Takes RESOURCE/NAME or RESOURCE NAME, e.g. deployments/web or configmaps.v1 settings.",
		Example: "  kube-annotator explain deployments/web -n team-a\n" +
			"  kube-annotator explain configmaps settings -o yaml",
		Args: objectArgs,
	}
	rulesPath := addRulesFlag(c)
	fs := newFlags(c)
	output := addOutputFlag(c)
	manager := addFieldManagerFlag(fs)
	cf := addClusterFlags(c, terminalRequestTimeout)
	cf.addExcludeFlag(fs)
	cf.addAllNamespacesFlag(fs, "Explain the objects of that name in every namespace, one after another (with -o, a list); "+
		"without it and -n, the kubeconfig context's namespace")
	addLogFlags(fs)
	c.ValidArgsFunction = cf.completeObject
	c.RunE = func(c *cobra.Command, args []string) error {
		if err := cmp.Or(validateOutput(*output), validateFieldManager(*manager), cf.validate(), defaultRulesExist(fs)); err != nil {
			return usageError{err}
		}
		ctx, restore := e.logging(c.Context(), fs)
		defer restore()
		resource, name := objectOf(args)
		xs, err := explainObjects(ctx, *rulesPath, *manager, cf, resource, name)
		if err != nil {
			return err
		}
		if cf.allNamespaces && *output != "" {
			return encode(e.Out, *output, xs) // a list, however many
		}
		for i, x := range xs {
			if i > 0 {
				fmt.Fprintln(e.Out)
			}
			if err := printExplained(e.Out, *output, x); err != nil {
				return err
			}
		}
		return nil
	}
	return c
}

// objectArgs is explain's argument check: one object, as RESOURCE/NAME or
// RESOURCE NAME.
func objectArgs(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		resource, name, ok := strings.Cut(args[0], "/")
		if !ok || resource == "" || name == "" || strings.Contains(name, "/") {
			return usageErrorf("%q: name one object as RESOURCE/NAME or RESOURCE NAME, e.g. deployments/web", args[0])
		}
	case 2:
		if strings.Contains(args[0], "/") || args[1] == "" || strings.Contains(args[1], "/") {
			return usageErrorf("%q %q: name one object as RESOURCE/NAME or RESOURCE NAME, e.g. deployments web", args[0], args[1])
		}
	default:
		return usageErrorf("want one object, RESOURCE/NAME or RESOURCE NAME; got %d arguments", len(args))
	}
	return nil
}

// objectOf is the resource and name of the object that args, checked by
// objectArgs, name.
func objectOf(args []string) (resource, name string) {
	if len(args) == 2 {
		return args[0], args[1]
	}
	resource, name, _ = strings.Cut(args[0], "/")
	return resource, name
}

// explainObjects explains the object name of resource under the rules file
// at path, for a controller writing as manager: in the namespace -n or
// the kubeconfig context names, or, with -A, each object of that name in
// every namespace.
func explainObjects(ctx context.Context, path, manager string, cf *clusterFlags, resource, name string) ([]*explained, error) {
	c, err := cf.loadAndCompile(path)
	if err != nil {
		return nil, err
	}
	res, err := c.resolver.Resolve(resource)
	if err != nil {
		return nil, fmt.Errorf("resource %q: %w", resource, err)
	}
	t := targetOf(c.set, res.GVR.GroupResource())
	if t == nil {
		return nil, fmt.Errorf("resource %q (%s): no rule in %s names it", resource, source.GVRString(res.GVR), path)
	}
	dyn, err := dynamic.NewForConfig(c.cfg)
	if err != nil {
		return nil, err
	}
	namespaces := []string{""}
	switch {
	case t.Namespaced && cf.allNamespaces:
		namespaces, err = namespacesOf(ctx, dyn, t.GVR, name)
	case t.Namespaced:
		namespaces[0], err = cf.kube.DefaultNamespace()
	}
	if err != nil {
		return nil, err
	}
	var out []*explained
	for _, ns := range namespaces {
		x, err := explainIn(ctx, dyn, t, ns, name, manager)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// namespacesOf lists the namespaces that hold an object of gvr named name.
func namespacesOf(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, name string) ([]string, error) {
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
func explainIn(ctx context.Context, dyn dynamic.Interface, t *rules.Target, ns, name, manager string) (*explained, error) {
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
	out := &explained{Resource: source.GVRString(t.GVR), Namespace: ns, Name: name, Explanation: x}
	if out.Fight, err = fightOf(ctx, dyn, ns, obj.GetUID(), time.Now()); err != nil {
		out.FightUnknown = err.Error()
	}
	return out, nil
}

// targetOf returns the target of set for gr, at whatever version the rules
// named it, or nil.
func targetOf(set *rules.Set, gr schema.GroupResource) *rules.Target {
	for gvr, t := range set.Targets {
		if gvr.GroupResource() == gr {
			return t
		}
	}
	return nil
}
