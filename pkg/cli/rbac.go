package cli

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/spf13/cobra"
)

func (e *env) newRBACCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "rbac",
		Short: "Print the least-privilege RBAC for a rules file",
		Long: "Print the least-privilege ServiceAccount, ClusterRole and ClusterRoleBinding for a rules file:\n" +
			"get, list, watch and patch on exactly the resources it names; and a Role and RoleBinding in the ServiceAccount's namespace\n" +
			"for the ConfigMap that records the resources written to, and the Lease for leader election. Resource names are resolved\n" +
			"through the cluster's discovery or, with --offline, among the built-in resources and the CRDs of --crd files;\n" +
			"a name with a group (frigates.ship.nwiizo.dev) that is not served (or not known offline) is taken as written.",
		Args: noArgs,
	}
	rulesPath := addRulesFlag(c)
	fs := newFlags(c)
	o := rbacOptions{}
	fs.StringVar(&o.name, "name", "kube-annotator", "Name of the ServiceAccount, ClusterRole and ClusterRoleBinding")
	fs.BoolVar(&o.leases, "leader-election", true, "Also grant the Lease for leader election (in the Role in the ServiceAccount's namespace)")
	fs.StringVar(&o.lease, "leader-election-id", defaultLeaseName, "Name of the Lease granted for leader election: run's --leader-election-id")
	fs.BoolVar(&o.events, "events", false, "Also grant creating Events (for run --events)")
	fs.BoolVar(&o.admission, "admission-policies", false, "Also grant managing kube-annotator's MutatingAdmissionPolicies and bindings (for run --admission-policies)")
	manager := addFieldManagerFlag(fs)
	offline := addOfflineFlags(c, "Do not contact a cluster: resolve resource names among the built-in resources and the --crd files")
	cf := addClusterFlags(c, terminalRequestTimeout)
	cf.offline = offline
	addLogFlags(fs)
	c.RunE = func(c *cobra.Command, _ []string) error {
		if err := cmp.Or(validateFieldManager(*manager), cf.validate(), validateRBACNames(o.name, o.lease), defaultRulesExist(fs)); err != nil {
			return usageError{err}
		}
		_, restore := e.logging(c.Context(), fs)
		defer restore()
		o.record = record.Name(*manager)
		return e.rbac(*rulesPath, o, cf)
	}
	return c
}

// rbac prints the RBAC that o says for the rules file at path, its
// resources resolved on the cluster.
func (e *env) rbac(path string, o rbacOptions, cf *clusterFlags) error {
	file, err := rules.Load(path)
	if err != nil {
		return err
	}
	_, r, err := cf.resolver()
	if err != nil {
		return err
	}
	var grs []schema.GroupResource
	resolved := map[string]rules.Resource{}
	failed := false
	for i, rule := range file.Rules {
		for j, name := range rule.Resources {
			res, warning, err := resource(r, name)
			if err != nil {
				fmt.Fprintf(e.Err, "%s: rules[%d].resources[%d]: %v\n", path, i, j, err)
				failed = true
				continue
			}
			if warning != "" {
				fmt.Fprintf(e.Err, "warning: %s: rules[%d].resources[%d]: %s\n", path, i, j, warning)
			}
			resolved[name] = res
			grs = append(grs, res.GVR.GroupResource())
		}
	}
	if failed {
		return exitCode(1) // each resource that failed is said above
	}
	warnSensitive(e.Err, path, file, groupResources(resolved))
	ns := cf.namespace()
	if ns == "" {
		ns = "kube-annotator"
	}
	if o.admission {
		fmt.Fprintln(e.Err, admissionWarning)
	}
	o.namespace, o.resources, o.watchNamespaces, o.related = ns, grs, watchesNamespaces(file, resolved), relatedResources(file)
	out, err := rbacManifests(o)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(e.Out, out)
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

// resource resolves a resource name. A name that discovery says is not
// served but names
// its group is taken as written, with a warning; it is taken as namespaced,
// which grants more (watching namespaces) rather than less than the
// controller may need once the resource is served.
func resource(r *resolve.Resolver, name string) (rules.Resource, string, error) {
	res, err := r.Resolve(name)
	if err == nil {
		return res, "", nil
	}
	if gr := schema.ParseGroupResource(name); gr.Group != "" && errors.Is(err, resolve.ErrNotServed) {
		return rules.Resource{GVR: gr.WithVersion(""), Namespaced: true},
			fmt.Sprintf("%s is not %s; granting resource %q in group %q as written", name, notServedBy(r), gr.Resource, gr.Group), nil
	}
	return rules.Resource{}, "", err
}

// groupResources maps each resource name to its group and resource.
func groupResources(resolved map[string]rules.Resource) map[string]schema.GroupResource {
	out := make(map[string]schema.GroupResource, len(resolved))
	for name, res := range resolved {
		out[name] = res.GVR.GroupResource()
	}
	return out
}

// watchesNamespaces reports whether the controller watches namespaces for
// the rules, asking rules.NeedsNamespaces of each resource a rule names, as
// the controller asks it of each target.
func watchesNamespaces(file *rules.File, resolved map[string]rules.Resource) bool {
	for _, rule := range file.Rules {
		for _, name := range rule.Resources {
			if rules.NeedsNamespaces(resolved[name].Namespaced, rule.NamespaceSelector != "") {
				return true
			}
		}
	}
	return false
}

// relatedResources returns the resources of the related objects that the
// rules read values from (fromNode: nodes), which the controller lists and
// watches.
func relatedResources(file *rules.File) []schema.GroupResource {
	var out []schema.GroupResource
	for _, src := range rules.RelatedSources() {
		if slices.ContainsFunc(file.Rules, func(r rules.Rule) bool { return src.ReadBy(&r) }) {
			out = append(out, src.Resource.GVR.GroupResource())
		}
	}
	return out
}

// rbacOptions say what rbacManifests grants.
type rbacOptions struct {
	name, namespace string
	// lease names the Lease granted for leader election.
	lease     string
	resources []schema.GroupResource
	// watchNamespaces grants watching namespaces, for their labels
	// (namespaceSelector) and opt-outs: list and watch, and no patch
	// unless namespaces are among resources.
	watchNamespaces bool
	// related are the resources of related objects that rules read values
	// from (nodes, for fromNode): list and watch, unless among resources.
	related []schema.GroupResource
	// record names the ConfigMap that records the resources written to.
	record         string
	leases, events bool
	// admission grants managing admission policies.
	admission bool
}

// rbacManifests renders the ServiceAccount, ClusterRole (one rule per API
// group, resources sorted) and ClusterRoleBinding, and a Role and
// RoleBinding in the ServiceAccount's namespace — where the controller,
// in a Pod, keeps its record and its Lease — on the record's ConfigMap
// and, for leader election, the Lease, as a YAML stream.
func rbacManifests(o rbacOptions) (string, error) {
	labels := map[string]string{"app.kubernetes.io/name": "kube-annotator"}
	subject := rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(o.name).WithNamespace(o.namespace)
	roleRef := func(kind string) *rbacv1ac.RoleRefApplyConfiguration {
		return rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind(kind).WithName(o.name)
	}
	docs := []any{
		corev1ac.ServiceAccount(o.name, o.namespace).WithLabels(labels),
		rbacv1ac.ClusterRole(o.name).WithLabels(labels).WithRules(clusterRules(o)...),
		rbacv1ac.ClusterRoleBinding(o.name).WithLabels(labels).WithRoleRef(roleRef("ClusterRole")).WithSubjects(subject),
		rbacv1ac.Role(o.name, o.namespace).WithLabels(labels).WithRules(roleRules(o)...),
		rbacv1ac.RoleBinding(o.name, o.namespace).WithLabels(labels).WithRoleRef(roleRef("Role")).WithSubjects(subject),
	}
	var b strings.Builder
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		data, err := yaml.Marshal(d)
		if err != nil {
			return "", err
		}
		b.Write(data)
	}
	return b.String(), nil
}

// clusterRules are the ClusterRole's rules: the controller's verbs on the
// ruled resources, one rule per API group; then what it only reads or
// creates cluster-wide.
func clusterRules(o rbacOptions) []*rbacv1ac.PolicyRuleApplyConfiguration {
	byGroup := map[string][]string{}
	for _, gr := range o.resources {
		if !slices.Contains(byGroup[gr.Group], gr.Resource) {
			byGroup[gr.Group] = append(byGroup[gr.Group], gr.Resource)
		}
	}
	var out []*rbacv1ac.PolicyRuleApplyConfiguration
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		slices.Sort(byGroup[g])
		out = append(out, policyRule(g, byGroup[g], requiredVerbs...))
	}
	if o.watchNamespaces && !slices.Contains(byGroup[""], "namespaces") {
		out = append(out, policyRule("", []string{"namespaces"}, "list", "watch"))
	}
	for _, gr := range o.related {
		if !slices.Contains(byGroup[gr.Group], gr.Resource) {
			out = append(out, policyRule(gr.Group, []string{gr.Resource}, "list", "watch"))
		}
	}
	if o.events {
		out = append(out, policyRule("events.k8s.io", []string{"events"}, "create", "patch"))
	}
	if o.admission {
		out = append(out, policyRule("admissionregistration.k8s.io", admissionResources, admissionVerbs...))
	}
	return out
}

// roleRules are the Role's rules, in the ServiceAccount's namespace: the
// record's ConfigMap and, for leader election, the Lease. create cannot be
// limited to an object's name: RBAC checks it before the object, and its
// name, exist.
func roleRules(o rbacOptions) []*rbacv1ac.PolicyRuleApplyConfiguration {
	out := []*rbacv1ac.PolicyRuleApplyConfiguration{
		policyRule("", []string{"configmaps"}, "create"),
		policyRule("", []string{"configmaps"}, "get", "update").WithResourceNames(o.record),
	}
	if o.leases {
		out = append(out,
			policyRule("coordination.k8s.io", []string{"leases"}, "create"),
			policyRule("coordination.k8s.io", []string{"leases"}, "get", "update").WithResourceNames(o.lease),
		)
	}
	return out
}

// policyRule grants verbs on resources in an API group.
func policyRule(group string, resources []string, verbs ...string) *rbacv1ac.PolicyRuleApplyConfiguration {
	return rbacv1ac.PolicyRule().WithAPIGroups(group).WithResources(resources...).WithVerbs(verbs...)
}
