// Package resolve turns resource names as users write them (kubectl style:
// plural, singular, short name, "resource.group", "resource.version.group")
// into the GroupVersionResource the API server serves, through discovery.
package resolve

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// Resolver resolves resource names through a discovery-backed RESTMapper
// with kubectl's short-name expansion. Discovery is cached in memory; Reset
// drops the cache so that newly installed CRDs become visible.
type Resolver struct {
	deferred *restmapper.DeferredDiscoveryRESTMapper
	mapper   meta.RESTMapper
}

// New returns a Resolver over the given discovery client.
func New(dc discovery.DiscoveryInterface) *Resolver {
	cached := memory.NewMemCacheClient(dc)
	deferred := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	return &Resolver{
		deferred: deferred,
		mapper:   restmapper.NewShortcutExpander(deferred, cached, func(string) {}),
	}
}

// Reset forgets cached discovery information.
func (r *Resolver) Reset() { r.deferred.Reset() }

// Resolve maps a resource name to the resource served at its preferred
// version. It follows kubectl: a name with a version ("deployments.v1.apps")
// is tried as fully specified first, then as "resource.group".
func (r *Resolver) Resolve(name string) (rules.Resource, error) {
	full, gr := schema.ParseResourceArg(name)
	var gvk schema.GroupVersionKind
	if full != nil {
		gvk, _ = r.mapper.KindFor(*full)
	}
	if gvk.Empty() {
		var err error
		gvk, err = r.mapper.KindFor(gr.WithVersion(""))
		if err != nil {
			if meta.IsNoMatchError(err) {
				return rules.Resource{}, fmt.Errorf("resource %q not found on the server (a typo, or a CRD that is not installed?)", name)
			}
			return rules.Resource{}, fmt.Errorf("resolve resource %q: %w", name, err)
		}
	}
	mapping, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return rules.Resource{}, fmt.Errorf("resolve resource %q: %w", name, err)
	}
	return rules.Resource{
		GVR:        mapping.Resource,
		Kind:       mapping.GroupVersionKind.Kind,
		Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace,
	}, nil
}
