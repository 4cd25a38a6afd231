package rulestest

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Resources tests commonly serve.
var (
	ConfigMaps  = source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}
	Namespaces  = source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: "Namespace"}
	Deployments = source.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}
)

// Compile parses content as a rules file and compiles it for a cluster
// that serves resources, each named by its plural, with no rule applying
// in the cluster's own namespaces (rules.DefaultExcludedNamespaces). Any
// error, or a name that is not served, fails the test.
func Compile(t testing.TB, content string, resources ...source.Resource) *rules.Set {
	t.Helper()
	f, err := rules.Parse("rules.yaml", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	set, unresolved, err := rules.Compile("rules.yaml", f, func(name string) (source.Resource, error) {
		for _, r := range resources {
			if r.GVR.Resource == name {
				return r, nil
			}
		}
		return source.Resource{}, fmt.Errorf("unknown resource %q", name)
	})
	if err != nil || len(unresolved) > 0 {
		t.Fatalf("compile rules: %v %v", err, unresolved)
	}
	if err := set.ExcludeNamespaces(rules.DefaultExcludedNamespaces); err != nil {
		t.Fatal(err)
	}
	return set
}
