package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

func rbacCommand(_ context.Context, e *env, args []string) int {
	fs := e.newFlagSet("rbac", "Print the least-privilege ServiceAccount, ClusterRole and ClusterRoleBinding for a rules file:\n"+
		"get, list, watch and patch on exactly the resources it names; and a Role and RoleBinding in the ServiceAccount's namespace\n"+
		"for the ConfigMap that records the resources written to, and the Lease for leader election. Resource names are resolved\n"+
		"through the cluster's discovery; a name with a group (frigates.ship.nwiizo.dev) that the\n"+
		"cluster does not serve yet is taken as written.")
	rulesPath := fs.String("rules", "rules.yaml", "Path to the rules file")
	name := fs.String("name", "kube-annotator", "Name of the ServiceAccount, ClusterRole and ClusterRoleBinding")
	leases := fs.Bool("leader-election", true, "Also grant the Lease for leader election (in the Role in the ServiceAccount's namespace)")
	withEvents := fs.Bool("events", false, "Also grant creating Events (for run --events)")
	withAdmission := fs.Bool("admission-policies", false, "Also grant managing kube-annotator's MutatingAdmissionPolicies and bindings (for run --admission-policies)")
	manager := addFieldManagerFlag(fs)
	cf := addClusterFlags(fs)
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if err := validateFieldManager(*manager); err != nil {
		return e.usageError(fs, err)
	}
	file, err := rules.Load(*rulesPath)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	_, r, err := cf.resolver()
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	var grs []schema.GroupResource
	resolved := map[string]schema.GroupResource{}
	failed := false
	for i, rule := range file.Rules {
		for j, res := range rule.Resources {
			gr, warning, err := groupResource(r, res)
			if err != nil {
				fmt.Fprintf(e.Err, "%s: rules[%d].resources[%d]: %v\n", *rulesPath, i, j, err)
				failed = true
				continue
			}
			if warning != "" {
				fmt.Fprintf(e.Err, "warning: %s: rules[%d].resources[%d]: %s\n", *rulesPath, i, j, warning)
			}
			resolved[res] = gr
			grs = append(grs, gr)
		}
	}
	if failed {
		return 1
	}
	warnSensitive(e.Err, *rulesPath, file, resolved)
	// The controller watches namespaces: their labels for a
	// namespaceSelector, and their annotations to learn which opt out
	// (kube-annotator.io/ignore) when a namespaced resource is ruled (any
	// but namespaces may be).
	watchNamespaces := slices.ContainsFunc(file.Rules, func(r rules.Rule) bool { return r.NamespaceSelector != "" }) ||
		slices.ContainsFunc(grs, func(gr schema.GroupResource) bool { return gr != schema.GroupResource{Resource: "namespaces"} })
	ns := cf.namespace()
	if ns == "" {
		ns = "kube-annotator"
	}
	if *withAdmission {
		fmt.Fprintln(e.Err, admissionWarning)
	}
	out, err := rbacManifests(rbacOptions{name: *name, namespace: ns, resources: grs, record: record.Name(*manager),
		watchNamespaces: watchNamespaces, leases: *leases, events: *withEvents, admission: *withAdmission})
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	fmt.Fprint(e.Out, out)
	return 0
}

// groupResource resolves a resource name to its API group and resource.
// A name that is not served but names its group is taken as written.
func groupResource(r *resolve.Resolver, name string) (schema.GroupResource, string, error) {
	res, err := r.Resolve(name)
	if err == nil {
		return res.GVR.GroupResource(), "", nil
	}
	if gr := schema.ParseGroupResource(name); gr.Group != "" {
		return gr, fmt.Sprintf("%s is not served by the cluster; granting resource %q in group %q as written", name, gr.Resource, gr.Group), nil
	}
	return schema.GroupResource{}, "", err
}

// rbacOptions say what rbacManifests grants.
type rbacOptions struct {
	name, namespace string
	resources       []schema.GroupResource
	// watchNamespaces grants watching namespaces, for their labels
	// (namespaceSelector) and opt-outs: list and watch, and no patch
	// unless namespaces are among resources.
	watchNamespaces bool
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
	byGroup := map[string][]string{}
	for _, gr := range o.resources {
		if !slices.Contains(byGroup[gr.Group], gr.Resource) {
			byGroup[gr.Group] = append(byGroup[gr.Group], gr.Resource)
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	var policy []any
	for _, g := range groups {
		slices.Sort(byGroup[g])
		policy = append(policy, policyRule(g, byGroup[g], requiredVerbs, ""))
	}
	if o.watchNamespaces && !slices.Contains(byGroup[""], "namespaces") {
		policy = append(policy, policyRule("", []string{"namespaces"}, []string{"list", "watch"}, ""))
	}
	if o.events {
		policy = append(policy, policyRule("events.k8s.io", []string{"events"}, []string{"create", "patch"}, ""))
	}
	if o.admission {
		policy = append(policy, policyRule("admissionregistration.k8s.io", admissionResources, admissionVerbs, ""))
	}
	labels := map[string]string{"app.kubernetes.io/name": "kube-annotator"}
	meta := func(namespaced bool) map[string]any {
		m := map[string]any{"name": o.name, "labels": labels}
		if namespaced {
			m["namespace"] = o.namespace
		}
		return m
	}
	subjects := []any{map[string]any{"kind": "ServiceAccount", "name": o.name, "namespace": o.namespace}}
	const rbacV1 = "rbac.authorization.k8s.io/v1"
	docs := []map[string]any{
		{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(true)},
		{"apiVersion": rbacV1, "kind": "ClusterRole", "metadata": meta(false), "rules": policy},
		{"apiVersion": rbacV1, "kind": "ClusterRoleBinding", "metadata": meta(false), "subjects": subjects,
			"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": o.name}},
	}
	// create cannot be limited to an object's name: RBAC checks it before
	// the object, and its name, exist.
	role := []any{
		policyRule("", []string{"configmaps"}, []string{"create"}, ""),
		policyRule("", []string{"configmaps"}, []string{"get", "update"}, o.record),
	}
	if o.leases {
		role = append(role,
			policyRule("coordination.k8s.io", []string{"leases"}, []string{"create"}, ""),
			policyRule("coordination.k8s.io", []string{"leases"}, []string{"get", "update"}, o.name),
		)
	}
	docs = append(docs,
		map[string]any{"apiVersion": rbacV1, "kind": "Role", "metadata": meta(true), "rules": role},
		map[string]any{"apiVersion": rbacV1, "kind": "RoleBinding", "metadata": meta(true), "subjects": subjects,
			"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": o.name}},
	)
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

// policyRule is one RBAC PolicyRule; resourceName, when set, limits it to
// that object.
func policyRule(group string, resources, verbs []string, resourceName string) map[string]any {
	r := map[string]any{"apiGroups": []string{group}, "resources": resources, "verbs": verbs}
	if resourceName != "" {
		r["resourceNames"] = []string{resourceName}
	}
	return r
}
