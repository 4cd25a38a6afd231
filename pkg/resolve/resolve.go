package resolve

import (
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
)

// ErrNotServed is what Resolve's error matches, with errors.Is, when
// discovery answered and the server does not serve the named resource: a
// typo, or a CRD that is not installed. Any other error from Resolve means
// that the server could not be asked (network, authentication, …).
var ErrNotServed = errors.New("resource not served")

// notServedError names the resource that is not served.
type notServedError struct {
	name string
	// suggestion is a served name close to name, or "".
	suggestion string
	// offline is set when no server was asked (NewOffline); crdSetting
	// then names how CRD files are given, or is "".
	offline    bool
	crdSetting string
}

func (e *notServedError) Error() string {
	var s string
	switch {
	case e.offline:
		s = fmt.Sprintf("resource %q is not built into Kubernetes %s and no %s defines it", e.name, staticdiscovery.KubeVersion(), e.crdFile())
	default:
		s = fmt.Sprintf("resource %q not found on the server", e.name)
	}
	switch {
	case e.suggestion != "":
		return s + fmt.Sprintf(" (did you mean %q?)", e.suggestion)
	case e.offline && e.crdSetting != "":
		return s + " (a typo, or a CRD whose file is not given with " + e.crdSetting + "?)"
	case e.offline:
		return s + " (a typo, or a CRD whose file is not given?)"
	}
	return s + " (a typo, or a CRD that is not installed?)"
}

// crdFile is what an offline error says defines no resource: a CRD file
// given as crdSetting says.
func (e *notServedError) crdFile() string {
	if e.crdSetting == "" {
		return "CRD file given"
	}
	return e.crdSetting + " file"
}

func (e *notServedError) Is(target error) bool { return target == ErrNotServed }

// Resolver resolves resource names through a discovery-backed RESTMapper
// with kubectl's short-name expansion. Discovery is cached in memory; Reset
// drops the cache so that newly installed CRDs become visible.
type Resolver struct {
	cached   discovery.CachedDiscoveryInterface
	deferred *restmapper.DeferredDiscoveryRESTMapper
	mapper   meta.RESTMapper
	offline  bool // asks no server (NewOffline)
	// crdSetting names, offline, how CRD files are given (NewOffline).
	crdSetting string

	mu      sync.Mutex
	schemas map[schema.GroupVersionKind]schemaEntry // see Schema
}

// New returns a Resolver over the given discovery client.
func New(dc discovery.DiscoveryInterface) *Resolver {
	cached := memory.NewMemCacheClient(dc)
	deferred := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	return &Resolver{
		cached:   cached,
		deferred: deferred,
		mapper:   restmapper.NewShortcutExpander(deferred, groupOrdered{cached}, func(string) {}),
	}
}

// Reset forgets cached discovery information.
func (r *Resolver) Reset() { r.deferred.Reset() }

// Resolve maps a resource name to the resource served at its preferred
// version. Its error matches ErrNotServed when the server does not serve
// the resource.
func (r *Resolver) Resolve(name string) (source.Resource, error) {
	gvk, err := r.kindFor(name)
	if err != nil {
		return source.Resource{}, r.resolveError(name, err)
	}
	mapping, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return source.Resource{}, r.resolveError(name, err)
	}
	return source.Resource{
		GVR:        mapping.Resource,
		Kind:       mapping.GroupVersionKind.Kind,
		Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace,
	}, nil
}

// ResolveGroupResource resolves a group-resource as a record lists it
// ("" for the core group) to that resource in exactly that group, served
// at its preferred version. Unlike Resolve it expands no short names: the
// name is a resource's plural, as the API server serves it. Its error
// matches ErrNotServed when the server does not serve the resource.
func (r *Resolver) ResolveGroupResource(gr schema.GroupResource) (source.Resource, error) {
	gvks, err := r.deferred.KindsFor(gr.WithVersion(""))
	if err != nil && !meta.IsNoMatchError(err) {
		return source.Resource{}, r.resolveError(gr.String(), err)
	}
	for _, gvk := range gvks {
		if gvk.Group != gr.Group {
			continue // the same resource name in another group
		}
		mapping, err := r.deferred.RESTMapping(gvk.GroupKind())
		if err != nil {
			return source.Resource{}, r.resolveError(gr.String(), err)
		}
		return source.Resource{
			GVR:        mapping.Resource,
			Kind:       mapping.GroupVersionKind.Kind,
			Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace,
		}, nil
	}
	return source.Resource{}, &notServedError{name: gr.String(), offline: r.offline, crdSetting: r.crdSetting}
}

// kindFor follows kubectl: a name with a version ("deployments.v1.apps")
// is tried as fully specified first, then as "resource.group".
func (r *Resolver) kindFor(name string) (schema.GroupVersionKind, error) {
	full, gr := schema.ParseResourceArg(name)
	if full != nil {
		if gvk, err := r.mapper.KindFor(*full); err == nil {
			return gvk, nil
		}
		// Not served at that version, or the dots were the group's
		// ("deployments.v1.apps" as group "v1.apps"): the second try says
		// which, and its error is the one reported.
	}
	return r.mapper.KindFor(gr.WithVersion(""))
}

// resolveError is err, from resolving name, as Resolve reports it.
func (r *Resolver) resolveError(name string, err error) error {
	if meta.IsNoMatchError(err) {
		return &notServedError{name: name, suggestion: r.suggest(name), offline: r.offline, crdSetting: r.crdSetting}
	}
	return fmt.Errorf("resolve resource %q: %w", name, err)
}
