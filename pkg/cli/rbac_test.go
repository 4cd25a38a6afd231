package cli

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// clusterRoleRules returns the rules of the ClusterRole in a YAML stream
// from rbacManifests.
func clusterRoleRules(t *testing.T, stream string) []map[string][]string {
	t.Helper()
	for _, doc := range strings.Split(stream, "---\n") {
		var obj struct {
			Kind  string                `json:"kind"`
			Rules []map[string][]string `json:"rules"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Kind == "ClusterRole" {
			return obj.Rules
		}
	}
	t.Fatalf("no ClusterRole in:\n%s", stream)
	return nil
}

// The ClusterRole grants the controller's verbs on the ruled resources;
// namespaces whose labels rules only read are listed and watched, not
// patched.
func TestRBACManifestsClusterRole(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	namespaces := schema.GroupResource{Resource: "namespaces"}
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	rule := func(group string, resources []string, verbs ...string) map[string][]string {
		return map[string][]string{"apiGroups": {group}, "resources": resources, "verbs": verbs}
	}
	controllerVerbs := []string{"get", "list", "watch", "patch"}
	tests := []struct {
		name string
		opts rbacOptions
		want []map[string][]string
	}{
		{name: "one rule per group, sorted", opts: rbacOptions{resources: []schema.GroupResource{deployments, pods, pods}},
			want: []map[string][]string{rule("", []string{"pods"}, controllerVerbs...), rule("apps", []string{"deployments"}, controllerVerbs...)}},
		{name: "namespace labels are read only", opts: rbacOptions{resources: []schema.GroupResource{pods}, watchNamespaces: true},
			want: []map[string][]string{rule("", []string{"pods"}, controllerVerbs...), rule("", []string{"namespaces"}, "list", "watch")}},
		{name: "ruled namespaces are patched", opts: rbacOptions{resources: []schema.GroupResource{pods, namespaces}, watchNamespaces: true},
			want: []map[string][]string{rule("", []string{"namespaces", "pods"}, controllerVerbs...)}},
		{name: "Nodes a rule reads values from are read only", opts: rbacOptions{resources: []schema.GroupResource{pods}, watchNamespaces: true,
			related: relatedResources(&rules.File{Rules: []rules.Rule{{Resources: []string{"pods"},
				LabelsFromRelated: map[string]rules.RelatedKey{"zone": {From: "fromNode", Kind: "label", Key: "zone"}}}}})},
			want: []map[string][]string{rule("", []string{"pods"}, controllerVerbs...), rule("", []string{"namespaces"}, "list", "watch"), rule("", []string{"nodes"}, "list", "watch")}},
		{name: "ruled Nodes are patched", opts: rbacOptions{resources: []schema.GroupResource{pods, {Resource: "nodes"}}, related: []schema.GroupResource{{Resource: "nodes"}}},
			want: []map[string][]string{rule("", []string{"nodes", "pods"}, controllerVerbs...)}},
		{name: "events", opts: rbacOptions{resources: []schema.GroupResource{pods}, events: true},
			want: []map[string][]string{rule("", []string{"pods"}, controllerVerbs...), rule("events.k8s.io", []string{"events"}, "create", "patch")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.name, tc.opts.namespace = "kube-annotator", "kube-annotator"
			out, err := rbacManifests(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := clusterRoleRules(t, out); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ClusterRole rules:\n%v\nwant:\n%v", got, tc.want)
			}
		})
	}
}

// rbac grants watching namespaces exactly when the controller watches
// them: for a namespaced resource, or for a rule that selects by namespace
// labels.
func TestWatchesNamespaces(t *testing.T) {
	resolved := map[string]rules.Resource{
		"pods":       {GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true},
		"nodes":      {GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}},
		"namespaces": {GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}},
	}
	tests := []struct {
		name  string
		rules []rules.Rule
		want  bool
	}{
		{name: "namespaced resource", rules: []rules.Rule{{Resources: []string{"nodes", "pods"}}}, want: true},
		{name: "cluster-scoped resources", rules: []rules.Rule{{Resources: []string{"nodes"}}, {Resources: []string{"namespaces"}}}},
		{name: "namespace labels", rules: []rules.Rule{{Resources: []string{"nodes"}}, {Resources: []string{"nodes"}, NamespaceSelector: "team"}}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := watchesNamespaces(&rules.File{Rules: tc.rules}, resolved); got != tc.want {
				t.Errorf("watchesNamespaces = %v, want %v", got, tc.want)
			}
		})
	}
}

// rbac refuses, as usage errors naming the flag, names the API server
// would reject, before it reads the rules or asks the cluster.
func TestRBACNames(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--name", "Bad Name"}, `error: --name "Bad Name": a lowercase RFC 1123 subdomain must consist of`},
		{[]string{"-n", "Bad_NS"}, `error: --namespace "Bad_NS": a lowercase RFC 1123 label must consist of`},
		{[]string{"-n", "a.b"}, `error: --namespace "a.b": must not contain dots`},
		{[]string{"--leader-election-id", "Lease!"}, `error: --leader-election-id "Lease!": a lowercase RFC 1123 subdomain`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := invoke("kube-annotator", append([]string{"rbac", "--rules", "none.yaml"}, tc.args...)...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.want) || !strings.HasSuffix(stderr, "\nSee 'kube-annotator rbac --help'.\n") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q…", code, stdout, stderr, tc.want)
			}
		})
	}
}
