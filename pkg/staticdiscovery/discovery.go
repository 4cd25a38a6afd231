package staticdiscovery

import (
	"errors"
	"fmt"
	"slices"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	restclient "k8s.io/client-go/rest"
)

// ErrNoServer is what Discovery's methods that only a server could answer
// (its version, its OpenAPI v2 document, and its OpenAPI v3 documents
// unless given) return.
var ErrNoServer = errors.New("no API server: resources are known offline")

// Discovery is a discovery.DiscoveryInterface over a fixed set of
// resources. It is safe for concurrent use; it is never changed.
type Discovery struct {
	// groups are in the order a server lists them: the core group first,
	// which wins a name that two groups share (events), then the others
	// as given. Each group's versions are in the order of preference.
	groups []metav1.APIGroup
	lists  map[string]*metav1.APIResourceList // by group-version
	// openAPI returns the OpenAPI v3 documents, or nil when there are
	// none (New).
	openAPI func() (Documents, error)
}

var _ discovery.DiscoveryInterface = (*Discovery)(nil)

// New returns a Discovery of the resources of lists, one list per
// group-version, with no OpenAPI documents. Two lists of one
// group-version are merged; a resource listed twice in one group-version
// is an error.
func New(lists ...*metav1.APIResourceList) (*Discovery, error) {
	return NewWithOpenAPI(nil, lists...)
}

// NewWithOpenAPI is New with the OpenAPI v3 documents that docs returns,
// which its OpenAPIV3 client serves; docs is called each time they are
// asked for, so that they are read only when needed.
func NewWithOpenAPI(docs func() (Documents, error), lists ...*metav1.APIResourceList) (*Discovery, error) {
	d := &Discovery{lists: map[string]*metav1.APIResourceList{}, openAPI: docs}
	versions := map[string][]string{} // by group
	var groups []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, fmt.Errorf("resource list %q: %w", l.GroupVersion, err)
		}
		merged := d.lists[l.GroupVersion]
		if merged == nil {
			merged = &metav1.APIResourceList{TypeMeta: l.TypeMeta, GroupVersion: l.GroupVersion}
			d.lists[l.GroupVersion] = merged
			if _, ok := versions[gv.Group]; !ok {
				groups = append(groups, gv.Group)
			}
			versions[gv.Group] = append(versions[gv.Group], gv.Version)
		}
		for _, r := range l.APIResources {
			if slices.ContainsFunc(merged.APIResources, func(o metav1.APIResource) bool { return o.Name == r.Name }) {
				return nil, fmt.Errorf("resource %s is listed twice in %s", r.Name, l.GroupVersion)
			}
			merged.APIResources = append(merged.APIResources, r)
		}
	}
	// The core group first, as a server lists it; a stable sort keeps
	// the others in the order given.
	slices.SortStableFunc(groups, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "":
			return -1
		case b == "":
			return 1
		}
		return 0
	})
	for _, g := range groups {
		d.groups = append(d.groups, apiGroup(g, versions[g]))
	}
	return d, nil
}

// apiGroup is the group named name with versions, the preferred first:
// GA before beta before alpha, newer before older, as a server prefers.
func apiGroup(name string, versions []string) metav1.APIGroup {
	slices.SortFunc(versions, func(a, b string) int { return -version.CompareKubeAwareVersionStrings(a, b) })
	g := metav1.APIGroup{Name: name}
	for _, v := range versions {
		gv := schema.GroupVersion{Group: name, Version: v}
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: v})
	}
	g.PreferredVersion = g.Versions[0]
	return g
}

// ServerGroups returns the groups, the core group first.
func (d *Discovery) ServerGroups() (*metav1.APIGroupList, error) {
	l := &metav1.APIGroupList{}
	for _, g := range d.groups {
		l.Groups = append(l.Groups, *g.DeepCopy())
	}
	return l, nil
}

// ServerResourcesForGroupVersion returns the resources of groupVersion,
// or a NotFound error when it has none.
func (d *Discovery) ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error) {
	l, ok := d.lists[groupVersion]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "groupversion"}, groupVersion)
	}
	return l.DeepCopy(), nil
}

// ServerGroupsAndResources returns the groups and the resources of every
// group-version.
func (d *Discovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	var groups []*metav1.APIGroup
	var lists []*metav1.APIResourceList
	for _, g := range d.groups {
		groups = append(groups, g.DeepCopy())
		for _, v := range g.Versions {
			lists = append(lists, d.lists[v.GroupVersion].DeepCopy())
		}
	}
	return groups, lists, nil
}

// ServerPreferredResources returns each resource at the preferred version
// of its group that has it.
func (d *Discovery) ServerPreferredResources() ([]*metav1.APIResourceList, error) {
	return discovery.ServerPreferredResources(d)
}

// ServerPreferredNamespacedResources is ServerPreferredResources less the
// cluster-scoped resources.
func (d *Discovery) ServerPreferredNamespacedResources() ([]*metav1.APIResourceList, error) {
	return discovery.ServerPreferredNamespacedResources(d)
}

// ServerVersion returns ErrNoServer.
func (d *Discovery) ServerVersion() (*version.Info, error) { return nil, ErrNoServer }

// OpenAPISchema returns ErrNoServer.
func (d *Discovery) OpenAPISchema() (*openapi_v2.Document, error) { return nil, ErrNoServer }

// OpenAPIV3 returns a client of the documents of NewWithOpenAPI, or, from
// New, one whose Paths returns ErrNoServer.
func (d *Discovery) OpenAPIV3() openapi.Client {
	if d.openAPI == nil {
		return noOpenAPI{}
	}
	return openAPIClient{docs: d.openAPI}
}

// RESTClient returns nil: there is no server to send requests to.
func (d *Discovery) RESTClient() restclient.Interface { return nil }

// WithLegacy returns d: it serves one kind of document.
func (d *Discovery) WithLegacy() discovery.DiscoveryInterface { return d }

// noOpenAPI is an OpenAPI v3 client with no server.
type noOpenAPI struct{}

func (noOpenAPI) Paths() (map[string]openapi.GroupVersion, error) { return nil, ErrNoServer }
