package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	"github.com/kube-annotator/kube-annotator/pkg/keylock"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// admissionOptions are admission's flags.
type admissionOptions struct {
	*env
	commonFlags
	manager string
}

func (e *env) newAdmissionCommand() *cobra.Command {
	o := &admissionOptions{env: e}
	c := &cobra.Command{
		Use:   "admission",
		Short: "Print admission policies that annotate objects as they are created",
		Long: "Print the MutatingAdmissionPolicies and bindings that make the API server apply the rules to\n" +
			"objects as they are created or updated (for `kubectl apply -f -`); the controller still enforces\n" +
			"every rule, converges existing objects and deletes the keys no rule wants any more.\n" +
			"Resource names are resolved through the cluster's discovery or, with --offline, among the built-in\n" +
			"resources and the CRDs of --crd files. What cannot be done at admission\n" +
			"(removals, some JSONPath values) is said on stderr and left to the controller. For each rule marked\n" +
			"locked, it also prints the ValidatingAdmissionPolicy that lets only the rule's users and groups set,\n" +
			"change or remove its keys.",
		Args: noArgs,
	}
	fs := o.addRules(c)
	fieldManagerVar(fs, &o.manager)
	o.addOffline(c, "Do not contact a cluster: resolve resource names among the built-in resources and the --crd files")
	o.addCluster(c, terminalRequestTimeout, clusterScope{exclude: true,
		allNamespaces: "Policies that apply in every namespace: what admission prints without -n, whatever the kubeconfig context's namespace"})
	c.RunE = e.runE(o)
	return c
}

func (o *admissionOptions) complete(*cobra.Command, []string) error { return nil }

func (o *admissionOptions) validate() error {
	return o.commonFlags.validate(validateFieldManager(o.manager))
}

// run prints the admission policies of the rules file for the field
// manager.
func (o *admissionOptions) run(ctx context.Context) error {
	policies, set, err := translate(ctx, o.rulesPath, o.manager, o.cluster, o.Err)
	if err != nil {
		return err
	}
	out, err := admission.Manifests(policies)
	if err != nil {
		return err
	}
	locks, err := keylock.Manifests(keylock.Policies(set, o.manager))
	if err != nil {
		return err
	}
	out = append(out, locks...)
	if len(policies) == 0 {
		fmt.Fprintf(o.Err, "%s: no rule can be applied at admission\n", o.rulesPath)
	}
	_, err = o.Out.Write(out)
	return err
}

// fieldManagerVar adds --field-manager, stored in p.
func fieldManagerVar(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "field-manager", reconcile.FieldManager,
		"Field manager the controller writes as: only keys it owns are pruned when no rule wants them. It names the ConfigMap that records "+
			"the resources written to (<field-manager>-resources), the admission policies and the annotation that lists the keys they set")
}

// translate loads the rules file at path, compiles it against the cluster
// and translates it into admission policies for manager, reporting on
// warnings what is left to the controller, and what the policies need of
// a server that does not serve them.
func translate(ctx context.Context, path, manager string, cf *clusterFlags, warnings io.Writer) ([]admission.Policy, *rules.Set, error) {
	c, err := cf.loadAndCompile(path)
	if err != nil {
		return nil, nil, err
	}
	noteAdmissionServer(ctx, warnings, c.cfg)
	set := c.set
	for _, u := range c.unresolved {
		fmt.Fprintf(warnings, "warning: %s: %s: %s; no policy applies it\n", path, u.Field, u.Message)
	}
	policies, notes, err := admission.Translate(set, admission.Options{FieldManager: manager, ExcludeNamespaces: cf.exclude, Namespace: cf.namespace()})
	if err != nil {
		return nil, nil, fmt.Errorf("--field-manager: %w", err)
	}
	for _, n := range notes {
		fmt.Fprintf(warnings, "%s: %s\n", path, n)
	}
	return policies, set, nil
}

// noteAdmissionServer says on w what the admission policies need of the
// API server at cfg if it does not serve them, and what run
// --admission-policies does then; offline (no cfg), nothing.
func noteAdmissionServer(ctx context.Context, w io.Writer, cfg *rest.Config) {
	if note := admission.ServerNoteFor(ctx, cfg, "run --admission-policies"); note != "" {
		fmt.Fprintln(w, note)
	}
}

// admissionWarning is what rbac --admission-policies says of the grant.
const admissionWarning = "warning: --admission-policies lets the ServiceAccount create MutatingAdmissionPolicies, with which the API server " +
	"changes any object it admits: bind it only where whoever controls the rules file may change any object of the cluster"
