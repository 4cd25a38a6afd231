package resolve

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/openapi"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// appsV1 is the OpenAPI v3 document of apps/v1, cut down to Deployments'
// replicas, behind a reference as the API server writes it.
const appsV1 = `{"components": {"schemas": {
	"io.k8s.api.apps.v1.Deployment": {"type": "object",
		"properties": {"spec": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}]}},
		"x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Deployment", "version": "v1"}]},
	"io.k8s.api.apps.v1.DeploymentSpec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}`

// openAPIDiscovery is fake discovery that serves appsV1 as the only OpenAPI
// v3 document, at the address hash gives, counting the requests.
type openAPIDiscovery struct {
	*fakediscovery.FakeDiscovery
	hash           string
	paths, fetches int
}

func (d *openAPIDiscovery) OpenAPIV3() openapi.Client { return openAPIClient{d} }

func (d *openAPIDiscovery) OpenAPIV3WithContext(context.Context) openapi.ClientWithContext {
	return openapi.ToClientWithContext(openAPIClient{d})
}

type openAPIClient struct{ d *openAPIDiscovery }

func (c openAPIClient) Paths() (map[string]openapi.GroupVersion, error) {
	c.d.paths++
	return map[string]openapi.GroupVersion{"apis/apps/v1": openAPIGroupVersion(c)}, nil
}

type openAPIGroupVersion struct{ d *openAPIDiscovery }

func (g openAPIGroupVersion) Schema(string) ([]byte, error) {
	g.d.fetches++
	return []byte(appsV1), nil
}

func (g openAPIGroupVersion) ServerRelativeURL() string {
	return "/openapi/v3/apis/apps/v1?hash=" + g.d.hash
}

// TestResolverSchema checks that Schema returns a kind's schema with its
// references resolved, fetches a group-version's document once per
// compile (until Reset) and again only when its address changes, and
// returns nil for what the server publishes no schema of.
func TestResolverSchema(t *testing.T) {
	var down error
	d := &openAPIDiscovery{FakeDiscovery: fakeDiscovery(&down), hash: "A"}
	r := New(d)
	deployments := source.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment"}
	replicas := func() string {
		t.Helper()
		s, err := r.Schema(deployments)
		if err != nil || s == nil {
			t.Fatalf("Schema(deployments) = %v, %v; want a schema", s, err)
		}
		return fmt.Sprint(s.Properties["spec"].Properties["replicas"].Type)
	}
	counts := func(step string, paths, fetches int) {
		t.Helper()
		if d.paths != paths || d.fetches != fetches {
			t.Errorf("%s: %d requests for the paths and %d for documents, want %d and %d", step, d.paths, d.fetches, paths, fetches)
		}
	}
	for range 2 {
		if got := replicas(); got != "[integer]" {
			t.Fatalf("spec.replicas has type %s, want [integer]", got)
		}
	}
	counts("asked twice", 1, 1)
	r.Reset()
	replicas()
	counts("after Reset, unchanged", 2, 1)
	r.Reset()
	d.hash = "B"
	replicas()
	counts("after Reset, changed", 3, 2)

	for _, res := range []source.Resource{
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap"},
		{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, Kind: "StatefulSet"},
	} {
		if s, err := r.Schema(res); s != nil || err != nil {
			t.Errorf("Schema(%s) = %v, %v; want nil, nil", res.GVR.Resource, s, err)
		}
	}
}
