package rbac

import (
	"cmp"
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// object is what a test reads of one generated object.
type object struct {
	Kind     string
	Metadata struct{ Name, Namespace string }
	Rules    []rbacv1.PolicyRule
}

// generate returns the objects Generate makes for rs, with the resources
// of the tests, as YAML prints them.
func generate(t *testing.T, rs []rulefile.Rule, o Options) []object {
	t.Helper()
	o.Name, o.Namespace = cmp.Or(o.Name, "ka"), cmp.Or(o.Namespace, "sys")
	out, err := YAML(Generate(&rulefile.File{Rules: rs}, resolved, o))
	if err != nil {
		t.Fatal(err)
	}
	var objs []object
	for _, doc := range strings.Split(out, "---\n") {
		var obj object
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// rulesOf returns the rules of the object of kind in namespace.
func rulesOf(t *testing.T, objs []object, kind, namespace string) []rbacv1.PolicyRule {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind && o.Metadata.Namespace == namespace {
			return o.Rules
		}
	}
	t.Fatalf("no %s in %q among %+v", kind, namespace, objs)
	return nil
}

var resolved = map[string]source.Resource{
	"pods":        {GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true},
	"po":          {GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true},
	"configmaps":  {GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true},
	"nodes":       {GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}},
	"namespaces":  {GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}},
	"deployments": {GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespaced: true},
}

func rule(group string, resources []string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: verbs}
}

var (
	allVerbs     = []string{"get", "list", "watch", "patch"}
	watchVerbs   = []string{"list", "watch"}
	writtenVerbs = []string{"get", "patch"}
	nsWatch      = rule("", []string{"namespaces"}, "list", "watch")
)

// Resources whose every rule names its namespaces literally are written
// with a Role in each of them; the ClusterRole grants them only the
// informer's verbs. A glob, a rule without namespaces or a cluster-scoped
// resource keeps the writes in the ClusterRole.
func TestGenerateScopes(t *testing.T) {
	annotate := map[string]string{"a": "1"}
	r := func(name string, resources []string, namespaces ...string) rulefile.Rule {
		return rulefile.Rule{Name: name, Resources: resources, Namespaces: namespaces, Annotations: rulefile.Metadata{Values: annotate}}
	}
	tests := []struct {
		name    string
		rules   []rulefile.Rule
		cluster []rbacv1.PolicyRule
		// roles are the rules of the Roles outside the ServiceAccount's
		// namespace, by namespace.
		roles map[string][]rbacv1.PolicyRule
		// own are the ServiceAccount namespace's Role's rules after the
		// record's and the Lease's.
		own []rbacv1.PolicyRule
	}{
		{name: "literal namespaces: Roles", rules: []rulefile.Rule{r("a", []string{"pods", "deployments"}, "team-b", "team-a")},
			cluster: []rbacv1.PolicyRule{rule("", []string{"pods"}, watchVerbs...), rule("apps", []string{"deployments"}, watchVerbs...), nsWatch},
			roles: map[string][]rbacv1.PolicyRule{
				"team-a": {rule("", []string{"pods"}, writtenVerbs...), rule("apps", []string{"deployments"}, writtenVerbs...)},
				"team-b": {rule("", []string{"pods"}, writtenVerbs...), rule("apps", []string{"deployments"}, writtenVerbs...)},
			}},
		{name: "a glob: ClusterRole", rules: []rulefile.Rule{r("a", []string{"pods"}, "team-a", "team-*")},
			cluster: []rbacv1.PolicyRule{rule("", []string{"pods"}, allVerbs...), nsWatch}},
		{name: "no namespaces: ClusterRole", rules: []rulefile.Rule{r("a", []string{"pods"})},
			cluster: []rbacv1.PolicyRule{rule("", []string{"pods"}, allVerbs...), nsWatch}},
		{name: "one rule of a resource not confined: ClusterRole", rules: []rulefile.Rule{r("a", []string{"pods"}, "team-a"), r("b", []string{"po"}, "team-?")},
			cluster: []rbacv1.PolicyRule{rule("", []string{"pods"}, allVerbs...), nsWatch}},
		{name: "mixed", rules: []rulefile.Rule{r("a", []string{"pods", "configmaps"}, "team-a"), r("b", []string{"configmaps", "nodes"}), r("c", []string{"po"}, "team-b", "sys")},
			cluster: []rbacv1.PolicyRule{rule("", []string{"configmaps", "nodes"}, allVerbs...), rule("", []string{"pods"}, watchVerbs...), nsWatch},
			roles: map[string][]rbacv1.PolicyRule{
				"team-a": {rule("", []string{"pods"}, writtenVerbs...)},
				"team-b": {rule("", []string{"pods"}, writtenVerbs...)},
			},
			own: []rbacv1.PolicyRule{rule("", []string{"pods"}, writtenVerbs...)}},
		{name: "a cluster-scoped resource is written cluster-wide", rules: []rulefile.Rule{r("a", []string{"nodes", "namespaces"}, "team-a")},
			cluster: []rbacv1.PolicyRule{rule("", []string{"namespaces", "nodes"}, allVerbs...)}},
		{name: "a namespace selector confines nothing", rules: []rulefile.Rule{{Name: "a", Resources: []string{"nodes"}, NamespaceSelector: "team", Annotations: rulefile.Metadata{Values: annotate}}},
			cluster: []rbacv1.PolicyRule{rule("", []string{"nodes"}, allVerbs...), nsWatch}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := generate(t, tc.rules, Options{Record: "ka-resources"})
			if got := rulesOf(t, objs, "ClusterRole", ""); !reflect.DeepEqual(got, tc.cluster) {
				t.Errorf("ClusterRole rules:\n%v\nwant:\n%v", got, tc.cluster)
			}
			if got := rulesOf(t, objs, "Role", "sys")[2:]; !reflect.DeepEqual(got, tc.own) && len(got)+len(tc.own) > 0 {
				t.Errorf("Role in sys, after the record's rules:\n%v\nwant:\n%v", got, tc.own)
			}
			roles, bindings := map[string][]rbacv1.PolicyRule{}, map[string]bool{}
			for _, o := range objs {
				if o.Metadata.Namespace != "sys" && o.Kind == "Role" {
					roles[o.Metadata.Namespace] = o.Rules
				}
				if o.Kind == "RoleBinding" && o.Metadata.Name == "ka" {
					bindings[o.Metadata.Namespace] = true
				}
			}
			if len(roles)+len(tc.roles) > 0 && !reflect.DeepEqual(roles, tc.roles) {
				t.Errorf("Roles:\n%v\nwant:\n%v", roles, tc.roles)
			}
			for ns := range tc.roles {
				if !bindings[ns] {
					t.Errorf("no RoleBinding in %s", ns)
				}
			}
			if len(bindings) != len(tc.roles)+1 {
				t.Errorf("RoleBindings in %v, want one in sys and in each of %v", bindings, tc.roles)
			}
		})
	}
}

// The ClusterRole grants the controller's verbs on the ruled resources;
// namespaces whose labels rules only read, and Nodes a rule reads values
// from, are listed and watched, not patched.
func TestGenerateClusterRole(t *testing.T) {
	fromNode := map[string]rulefile.RelatedKey{"zone": {Source: source.Node, Kind: "label", Key: "zone"}}
	tests := []struct {
		name  string
		rules []rulefile.Rule
		opts  Options
		want  []rbacv1.PolicyRule
	}{
		{name: "one rule per group, sorted", rules: []rulefile.Rule{{Resources: []string{"deployments", "pods", "po"}}},
			want: []rbacv1.PolicyRule{rule("", []string{"pods"}, allVerbs...), rule("apps", []string{"deployments"}, allVerbs...), nsWatch}},
		{name: "ruled namespaces are patched", rules: []rulefile.Rule{{Resources: []string{"pods", "namespaces"}}},
			want: []rbacv1.PolicyRule{rule("", []string{"namespaces", "pods"}, allVerbs...)}},
		{name: "cluster-scoped resources watch no namespaces", rules: []rulefile.Rule{{Resources: []string{"nodes"}}},
			want: []rbacv1.PolicyRule{rule("", []string{"nodes"}, allVerbs...)}},
		{name: "Nodes a rule reads values from are read only", rules: []rulefile.Rule{{Resources: []string{"pods"}, Labels: rulefile.Metadata{FromRelated: fromNode}}},
			want: []rbacv1.PolicyRule{rule("", []string{"pods"}, allVerbs...), nsWatch, rule("", []string{"nodes"}, "list", "watch")}},
		{name: "ruled Nodes are patched", rules: []rulefile.Rule{{Resources: []string{"pods", "nodes"}, Labels: rulefile.Metadata{FromRelated: fromNode}}},
			want: []rbacv1.PolicyRule{rule("", []string{"nodes", "pods"}, allVerbs...), nsWatch}},
		{name: "events and admission policies", rules: []rulefile.Rule{{Resources: []string{"nodes"}}}, opts: Options{Events: true, Admission: true},
			want: []rbacv1.PolicyRule{rule("", []string{"nodes"}, allVerbs...), rule("events.k8s.io", []string{"events"}, "create", "patch"),
				rule("admissionregistration.k8s.io", []string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"}, "list", "create", "patch", "delete")}},
		{name: "reports", rules: []rulefile.Rule{{Resources: []string{"nodes"}}}, opts: Options{Reports: true},
			want: []rbacv1.PolicyRule{rule("", []string{"nodes"}, allVerbs...), rule("openreports.io", []string{"clusterreports", "reports"}, "list", "create", "patch", "delete")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rulesOf(t, generate(t, tc.rules, tc.opts), "ClusterRole", ""); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ClusterRole rules:\n%v\nwant:\n%v", got, tc.want)
			}
		})
	}
}

// The Role in the ServiceAccount's namespace grants the record's ConfigMap
// — get and update by name, create (which RBAC cannot limit by name) —
// and, for leader election, the Lease.
func TestGenerateOwnRole(t *testing.T) {
	recordRules := []rbacv1.PolicyRule{
		rule("", []string{"configmaps"}, "create"),
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "update"}, ResourceNames: []string{"team-a-resources"}},
	}
	leaseRules := []rbacv1.PolicyRule{
		rule("coordination.k8s.io", []string{"leases"}, "create"),
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "update"}, ResourceNames: []string{"kube-annotator"}},
	}
	for _, leases := range []bool{false, true} {
		objs := generate(t, []rulefile.Rule{{Resources: []string{"pods"}}}, Options{Lease: "kube-annotator", Record: record.Name("team-a"), LeaderElection: leases})
		want := recordRules
		if leases {
			want = append(want, leaseRules...)
		}
		if got := rulesOf(t, objs, "Role", "sys"); !reflect.DeepEqual(got, want) {
			t.Errorf("leases %v: Role rules %+v, want %+v", leases, got, want)
		}
		if len(objs) != 5 || objs[4].Kind != "RoleBinding" || objs[4].Metadata != objs[3].Metadata {
			t.Errorf("leases %v: objects %+v, want a RoleBinding last, beside the Role", leases, objs)
		}
	}
}

// rbac grants watching namespaces exactly when the controller watches
// them: for a namespaced resource, or for a rule that selects by namespace
// labels.
func TestWatchesNamespaces(t *testing.T) {
	tests := []struct {
		name  string
		rules []rulefile.Rule
		want  bool
	}{
		{name: "namespaced resource", rules: []rulefile.Rule{{Resources: []string{"nodes", "pods"}}}, want: true},
		{name: "cluster-scoped resources", rules: []rulefile.Rule{{Resources: []string{"nodes"}}, {Resources: []string{"namespaces"}}}},
		{name: "namespace labels", rules: []rulefile.Rule{{Resources: []string{"nodes"}}, {Resources: []string{"nodes"}, NamespaceSelector: "team"}}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := watchesNamespaces(&rulefile.File{Rules: tc.rules}, resolved); got != tc.want {
				t.Errorf("watchesNamespaces = %v, want %v", got, tc.want)
			}
		})
	}
}
