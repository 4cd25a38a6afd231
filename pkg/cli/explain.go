package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// explained is explain's answer for one object, as -o json and -o yaml
// print it.
type explained struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	reconcile.Explanation
}

func explainCommand(ctx context.Context, e *env, args []string) error {
	fs := e.newFlagSet("explain", "Explain one object: every rule of its resource and whether it selects the object (if not, why),\n"+
		"the keys each selecting rule wants, who owns each annotation and label (managedFields), conflicts,\n"+
		"and what run would change. Takes RESOURCE/NAME, e.g. deployments/web or configmaps.v1/settings.")
	rulesPath := fs.String("rules", "rules.yaml", "Path to the rules file")
	output := fs.StringP("output", "o", "", "Output format: \"\" (text), json or yaml")
	manager := addFieldManagerFlag(fs)
	cf := addClusterFlags(fs, terminalRequestTimeout)
	cf.addExcludeFlag(fs)
	addLogFlags(fs)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return errHelp
	case err != nil:
		return usageError{err}
	case fs.NArg() != 1:
		return usageErrorf("want one RESOURCE/NAME, got %d arguments", fs.NArg())
	case *output != "" && *output != "json" && *output != "yaml":
		return usageErrorf("--output must be json or yaml, got %q", *output)
	}
	if err := cmp.Or(validateFieldManager(*manager), cf.validate()); err != nil {
		return usageError{err}
	}
	ctx, restore := e.logging(ctx, fs)
	defer restore()
	x, err := explainObject(ctx, *rulesPath, *manager, cf, fs.Arg(0))
	if err != nil {
		return err
	}
	return printExplained(e.Out, *output, x)
}

// explainObject explains the object arg (RESOURCE/NAME) names under the
// rules file at path, for a controller writing as manager.
func explainObject(ctx context.Context, path, manager string, cf *clusterFlags, arg string) (*explained, error) {
	resource, name, ok := strings.Cut(arg, "/")
	if !ok || resource == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%q: name one object as RESOURCE/NAME, e.g. deployments/web", arg)
	}
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
		return nil, fmt.Errorf("resource %q (%s): no rule in %s names it", resource, rules.GVRString(res.GVR), path)
	}
	ns := ""
	if t.Namespaced {
		if ns, err = cf.kube.DefaultNamespace(); err != nil {
			return nil, err
		}
	}
	dyn, err := dynamic.NewForConfig(c.cfg)
	if err != nil {
		return nil, err
	}
	ref := reconcile.Ref{GVR: t.GVR, Namespace: ns, Name: name}
	obj, err := dyn.Resource(t.GVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s not found", ref)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", ref, err)
	}
	nsLabels, nsIgnored, err := scan.Namespace(ctx, dyn, ns)
	if err != nil {
		return nil, err
	}
	x, err := reconcile.Explain(t, obj, nsLabels, nsIgnored, manager)
	if err != nil {
		return nil, fmt.Errorf("explain %s: %w", ref, err)
	}
	return &explained{Resource: rules.GVRString(t.GVR), Namespace: ns, Name: name, Explanation: x}, nil
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
