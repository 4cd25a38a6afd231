package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kube-annotator/kube-annotator/pkg/explain"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// explainOptions are explain's flags and the object its arguments name.
type explainOptions struct {
	*env
	commonFlags
	manager        string
	resource, name string
}

func (e *env) newExplainCommand() *cobra.Command {
	o := &explainOptions{env: e}
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
	fs := o.addRules(c)
	o.addOutput(c)
	fieldManagerVar(fs, &o.manager)
	o.addCluster(c, terminalRequestTimeout, clusterScope{exclude: true,
		allNamespaces: "Explain the objects of that name in every namespace, one after another (with -o, a list); " +
			"without it and -n, the kubeconfig context's namespace"})
	c.ValidArgsFunction = o.cluster.completeObject
	c.RunE = e.runE(o)
	return c
}

// complete takes the object from the arguments, which objectArgs checked.
func (o *explainOptions) complete(_ *cobra.Command, args []string) error {
	if len(args) == 2 {
		o.resource, o.name = args[0], args[1]
	} else {
		o.resource, o.name, _ = strings.Cut(args[0], "/")
	}
	return nil
}

func (o *explainOptions) validate() error {
	return o.commonFlags.validate(validateFieldManager(o.manager))
}

// run prints the explanation of each object, as text or as -o says.
func (o *explainOptions) run(ctx context.Context) error {
	xs, err := o.objects(ctx)
	if err != nil {
		return err
	}
	for _, x := range xs {
		nameExclusions(x)
	}
	if o.cluster.allNamespaces && o.output != "" {
		return encode(o.Out, o.output, xs) // a list, however many
	}
	for i, x := range xs {
		if i > 0 {
			fmt.Fprintln(o.Out)
		}
		if o.output != "" {
			err = encode(o.Out, o.output, x)
		} else {
			err = explain.Print(o.Out, x)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// nameExclusions words the reason of each rule that --exclude-namespaces
// leaves out of x with the flag.
func nameExclusions(x *explain.Object) {
	for i, v := range x.Rules {
		if v.Excluded != nil {
			x.Rules[i].Reason = fmt.Sprintf("--exclude-namespaces %q leaves out namespace %q", v.Excluded.Glob, v.Excluded.Namespace)
		}
	}
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

// objects explains the object the arguments name under the rules file:
// in the namespace -n or the kubeconfig context names, or, with -A, each
// object of that name in every namespace.
func (o *explainOptions) objects(ctx context.Context) ([]*explain.Object, error) {
	c, err := o.cluster.loadAndCompile(o.rulesPath)
	if err != nil {
		return nil, err
	}
	res, err := c.resolver.Resolve(o.resource)
	if err != nil {
		return nil, fmt.Errorf("resource %q: %w", o.resource, err)
	}
	t := explain.TargetOf(c.set, res.GVR.GroupResource())
	if t == nil {
		return nil, fmt.Errorf("resource %q (%s): no rule in %s names it", o.resource, source.GVRString(res.GVR), o.rulesPath)
	}
	namespace := o.cluster.kube.DefaultNamespace
	if o.cluster.allNamespaces {
		namespace = nil
	}
	return explain.Named(ctx, c.cfg, t, o.name, o.manager, namespace)
}
