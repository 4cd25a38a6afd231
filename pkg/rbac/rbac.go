package rbac

import (
	"maps"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/pkg/reports"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Options say, besides the rules, what Generate grants and to whom.
type Options struct {
	// Name names the ServiceAccount, the ClusterRole, the Roles and
	// their bindings; Namespace is the ServiceAccount's, where the
	// controller keeps its record and its Lease.
	Name, Namespace string
	// Record names the ConfigMap that records the resources written to.
	Record string
	// LeaderElection grants the Lease named Lease.
	LeaderElection bool
	Lease          string
	// Events grants creating Events (run --events).
	Events bool
	// Admission grants managing admission policies (run
	// --admission-policies).
	Admission bool
	// Reports grants writing OpenReports reports (run --reports).
	Reports bool
}

// Generate returns the RBAC objects the controller needs to enforce the
// rules of file, whose resource names resolved maps to their resources, as
// apply configurations in the order they are printed: the ServiceAccount,
// the ClusterRole and ClusterRoleBinding, then a Role and RoleBinding per
// namespace — the ServiceAccount's first, then the namespaces the
// controller writes in without a cluster-wide grant (Grants), sorted.
func Generate(file *rulefile.File, resolved map[string]source.Resource, o Options) []any {
	file = withTenants(file)
	grants := Grants(file, resolved)
	labels := map[string]string{"app.kubernetes.io/name": "kube-annotator"}
	subject := rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(o.Name).WithNamespace(o.Namespace)
	roleRef := func(kind string) *rbacv1ac.RoleRefApplyConfiguration {
		return rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind(kind).WithName(o.Name)
	}
	objs := []any{
		corev1ac.ServiceAccount(o.Name, o.Namespace).WithLabels(labels),
		rbacv1ac.ClusterRole(o.Name).WithLabels(labels).WithRules(clusterRules(grants, file, resolved, o)...),
		rbacv1ac.ClusterRoleBinding(o.Name).WithLabels(labels).WithRoleRef(roleRef("ClusterRole")).WithSubjects(subject),
	}
	written := writtenIn(grants)
	namespaces := slices.Sorted(maps.Keys(written))
	namespaces = slices.DeleteFunc(namespaces, func(ns string) bool { return ns == o.Namespace })
	for _, ns := range append([]string{o.Namespace}, namespaces...) {
		rs := groupRules(written[ns], Verbs(Written))
		if ns == o.Namespace {
			rs = append(ownRules(o), rs...)
		}
		objs = append(objs,
			rbacv1ac.Role(o.Name, ns).WithLabels(labels).WithRules(rs...),
			rbacv1ac.RoleBinding(o.Name, ns).WithLabels(labels).WithRoleRef(roleRef("Role")).WithSubjects(subject))
	}
	return objs
}

// YAML prints objs as a YAML stream.
func YAML(objs []any) (string, error) {
	var b strings.Builder
	for i, d := range objs {
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

// clusterRules are the ClusterRole's rules: per API group, sorted, every
// ResourceVerb on the resources written cluster-wide, then the Watched
// verbs on those written only in some namespaces; then what the
// controller only reads or creates cluster-wide.
func clusterRules(grants []Grant, file *rulefile.File, resolved map[string]source.Resource, o Options) []*rbacv1ac.PolicyRuleApplyConfiguration {
	cluster, watched := map[string][]string{}, map[string][]string{}
	ruled := map[string][]string{}
	for _, g := range grants {
		m := cluster
		if g.Namespaces != nil {
			m = watched
		}
		m[g.Resource.Group] = append(m[g.Resource.Group], g.Resource.Resource)
		ruled[g.Resource.Group] = append(ruled[g.Resource.Group], g.Resource.Resource)
	}
	var out []*rbacv1ac.PolicyRuleApplyConfiguration
	for _, group := range slices.Sorted(maps.Keys(ruled)) {
		if rs := cluster[group]; len(rs) > 0 {
			out = append(out, policyRule(group, rs, Verbs()...))
		}
		if rs := watched[group]; len(rs) > 0 {
			out = append(out, policyRule(group, rs, Verbs(Watched)...))
		}
	}
	watches, ruledNS := watchesNamespaces(file, resolved), slices.Contains(ruled[""], "namespaces")
	nsWatched := watches || ruledNS
	if watches && !ruledNS {
		out = append(out, policyRule("", []string{"namespaces"}, readOnlyVerbs...))
	}
	for _, gr := range relatedResources(file, resolved) {
		if !slices.Contains(ruled[gr.Group], gr.Resource) {
			out = append(out, policyRule(gr.Group, []string{gr.Resource}, readOnlyVerbs...))
		}
	}
	out = append(out, refNamedRules(file, resolved, ruled)...)
	out = append(out, tenantRules(file, o, nsWatched)...)
	if o.Events {
		out = append(out, policyRule("events.k8s.io", []string{"events"}, eventVerbs...))
	}
	if o.Admission {
		out = append(out, policyRule("admissionregistration.k8s.io", admissionResources, admissionVerbs...))
		out = append(out, paramRules(file, resolved)...)
	}
	if o.Reports {
		out = append(out, policyRule(reports.ReportResource.Group, []string{reports.ReportResource.Resource, reports.ClusterReportResource.Resource}, reportVerbs...))
	}
	return out
}

// writtenIn maps each namespace to the resources, by API group, written
// there without a cluster-wide grant.
func writtenIn(grants []Grant) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, g := range grants {
		for _, ns := range g.Namespaces {
			if out[ns] == nil {
				out[ns] = map[string][]string{}
			}
			out[ns][g.Resource.Group] = append(out[ns][g.Resource.Group], g.Resource.Resource)
		}
	}
	return out
}

// groupRules grants verbs on resources, one rule per API group, sorted.
func groupRules(byGroup map[string][]string, verbs []string) []*rbacv1ac.PolicyRuleApplyConfiguration {
	var out []*rbacv1ac.PolicyRuleApplyConfiguration
	for _, group := range slices.Sorted(maps.Keys(byGroup)) {
		out = append(out, policyRule(group, byGroup[group], verbs...))
	}
	return out
}

// ownRules are the rules of the Role in the ServiceAccount's namespace for
// the controller's own objects: the record's ConfigMap and, for leader
// election, the Lease. create cannot be limited to an object's name: RBAC
// checks it before the object, and its name, exist.
func ownRules(o Options) []*rbacv1ac.PolicyRuleApplyConfiguration {
	out := []*rbacv1ac.PolicyRuleApplyConfiguration{
		policyRule("", []string{"configmaps"}, "create"),
		policyRule("", []string{"configmaps"}, "get", "update").WithResourceNames(o.Record),
	}
	if o.LeaderElection {
		out = append(out,
			policyRule("coordination.k8s.io", []string{"leases"}, "create"),
			policyRule("coordination.k8s.io", []string{"leases"}, "get", "update").WithResourceNames(o.Lease),
		)
	}
	return out
}

// policyRule grants verbs on resources, sorted, in an API group.
func policyRule(group string, resources []string, verbs ...string) *rbacv1ac.PolicyRuleApplyConfiguration {
	return rbacv1ac.PolicyRule().WithAPIGroups(group).WithResources(slices.Sorted(slices.Values(resources))...).WithVerbs(verbs...)
}
