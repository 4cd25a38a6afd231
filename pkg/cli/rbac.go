package cli

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/rbac"
	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// rbacOptions are rbac's flags.
type rbacOptions struct {
	*env
	commonFlags
	rbac.Options
	manager string
}

func (e *env) newRBACCommand() *cobra.Command {
	o := &rbacOptions{env: e}
	c := &cobra.Command{
		Use:   "rbac",
		Short: "Print the least-privilege RBAC for a rules file",
		Long: "Print the least-privilege ServiceAccount, ClusterRole and ClusterRoleBinding for a rules file: list and watch on exactly\n" +
			"the resources it names, and get and patch on them cluster-wide, or, for a resource whose every rule names its namespaces\n" +
			"literally (no globs), in a Role and RoleBinding in each of those namespaces; and a Role and RoleBinding in the ServiceAccount's\n" +
			"namespace for the ConfigMap that records the resources written to, and the Lease for leader election. Resource names are resolved\n" +
			"through the cluster's discovery or, with --offline, among the built-in resources and the CRDs of --crd files;\n" +
			"a name with a group (frigates.ship.nwiizo.dev) that is not served (or not known offline) is taken as written.",
		Args: noArgs,
	}
	fs := o.addRules(c)
	fs.StringVar(&o.Name, "name", "kube-annotator", "Name of the ServiceAccount, ClusterRole, Roles and their bindings")
	fs.BoolVar(&o.LeaderElection, "leader-election", true, "Also grant the Lease for leader election (in the Role in the ServiceAccount's namespace)")
	fs.StringVar(&o.Lease, "leader-election-id", defaultLeaseName, "Name of the Lease granted for leader election: run's --leader-election-id")
	fs.BoolVar(&o.Events, "events", false, "Also grant creating Events (for run --events)")
	fs.BoolVar(&o.Reports, "reports", false, "Also grant writing OpenReports reports (for run --reports, and to delete them once it is off)")
	fs.BoolVar(&o.Admission, "admission-policies", false, "Also grant managing kube-annotator's MutatingAdmissionPolicies and bindings (for run --admission-policies)")
	fieldManagerVar(fs, &o.manager)
	o.addOffline(c, "Do not contact a cluster: resolve resource names among the built-in resources and the --crd files")
	o.addCluster(c, terminalRequestTimeout, clusterScope{})
	c.RunE = e.runE(o)
	return c
}

// complete names the record the field manager keeps and the namespace of
// the ServiceAccount: -n's, else kube-annotator.
func (o *rbacOptions) complete(*cobra.Command, []string) error {
	o.Record = record.Name(o.manager)
	o.Namespace = cmp.Or(o.cluster.namespace(), "kube-annotator")
	return nil
}

func (o *rbacOptions) validate() error {
	return o.commonFlags.validate(validateFieldManager(o.manager), validateRBACNames(o.Name, o.Lease))
}

// run prints the RBAC for the rules file, its resources resolved on the
// cluster or offline.
func (o *rbacOptions) run(context.Context) error {
	path := o.rulesPath
	file, err := rules.Load(path)
	if err != nil {
		return err
	}
	_, r, err := o.cluster.resolver()
	if err != nil {
		return err
	}
	resolved, problems := rbac.Resolve(path, file, r.ResolveAsWritten)
	failed := false
	for _, p := range problems {
		if p.Warning {
			fmt.Fprintln(o.Err, "warning: "+p.Message)
		} else {
			fmt.Fprintln(o.Err, p.Message)
			failed = true
		}
	}
	if failed {
		return exitCode(1) // each resource that failed is said above
	}
	warnSensitive(o.Err, path, file, rbac.GroupResources(resolved))
	if o.Admission {
		fmt.Fprintln(o.Err, admissionWarning)
	}
	out, err := rbac.YAML(rbac.Generate(file, resolved, o.Options))
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(o.Out, out)
	return err
}

// validateRBACNames reports, naming the flag, a name the API server would
// reject: --name and --leader-election-id name objects (DNS-1123
// subdomains). clusterFlags.validate checks -n.
func validateRBACNames(name, lease string) error {
	for _, c := range []struct {
		flag, value string
		check       func(string) []string
	}{
		{"--name", name, validation.IsDNS1123Subdomain},
		{"--leader-election-id", lease, validation.IsDNS1123Subdomain},
	} {
		if msgs := c.check(c.value); len(msgs) > 0 {
			return fmt.Errorf("%s %q: %s", c.flag, c.value, strings.Join(msgs, "; "))
		}
	}
	return nil
}
