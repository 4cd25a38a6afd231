package completion

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// resourceNames are the resources the cluster serves that can be listed,
// named as kubectl api-resources -o name names them: resource.group, or
// resource for the core group.
func resourceNames(dc discovery.DiscoveryInterface) ([]string, error) {
	lists, err := dc.ServerPreferredResources()
	if len(lists) == 0 && err != nil {
		return nil, err
	}
	var out []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "get") {
				continue
			}
			out = append(out, schema.GroupResource{Group: gv.Group, Resource: r.Name}.String())
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// listNames lists the names of gvr's objects in namespace ("" for every
// namespace, or a cluster-scoped resource), at most Limit.
func listNames(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) ([]string, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	list, err := mc.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: Limit})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list.Items))
	for _, o := range list.Items {
		out = append(out, o.Name)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// WithPrefix are the names that start with prefix.
func WithPrefix(names []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// Keys are the keys of m, sorted.
func Keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
