package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

func rbacCommand(_ context.Context, e *env, args []string) int {
	fs := e.newFlagSet("rbac", "Print the least-privilege ServiceAccount, ClusterRole and ClusterRoleBinding for a rules file:\n"+
		"get, list, watch and patch on exactly the resources it names. Resource names are resolved\n"+
		"through the cluster's discovery; a name with a group (frigates.ship.nwiizo.dev) that the\n"+
		"cluster does not serve yet is taken as written.")
	rulesPath := fs.String("rules", "rules.yaml", "Path to the rules file")
	name := fs.String("name", "kube-annotator", "Name of the ServiceAccount, ClusterRole and ClusterRoleBinding")
	cf := addClusterFlags(fs)
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	file, err := rules.Load(*rulesPath)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	cfg, err := cf.restConfig()
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	r := resolve.New(dc)
	var grs []schema.GroupResource
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
			grs = append(grs, gr)
		}
	}
	if failed {
		return 1
	}
	ns := cf.namespace()
	if ns == "" {
		ns = "kube-annotator"
	}
	out, err := rbacManifests(*name, ns, grs)
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

// rbacManifests renders the ServiceAccount, ClusterRole (one rule per API
// group, resources sorted) and ClusterRoleBinding as a YAML stream.
func rbacManifests(name, namespace string, grs []schema.GroupResource) (string, error) {
	byGroup := map[string][]string{}
	for _, gr := range grs {
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
		policy = append(policy, map[string]any{
			"apiGroups": []string{g},
			"resources": byGroup[g],
			"verbs":     requiredVerbs,
		})
	}
	labels := map[string]string{"app.kubernetes.io/name": "kube-annotator"}
	docs := []map[string]any{
		{
			"apiVersion": "v1",
			"kind":       "ServiceAccount",
			"metadata":   map[string]any{"name": name, "namespace": namespace, "labels": labels},
		},
		{
			"apiVersion": "rbac.authorization.k8s.io/v1",
			"kind":       "ClusterRole",
			"metadata":   map[string]any{"name": name, "labels": labels},
			"rules":      policy,
		},
		{
			"apiVersion": "rbac.authorization.k8s.io/v1",
			"kind":       "ClusterRoleBinding",
			"metadata":   map[string]any{"name": name, "labels": labels},
			"roleRef":    map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
			"subjects":   []any{map[string]any{"kind": "ServiceAccount", "name": name, "namespace": namespace}},
		},
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
