package e2e

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// allAPIs is a control plane that serves every built-in API, alpha and
// beta versions too, as staticdiscovery lists them.
var allAPIs = h.Options{APIServerFlags: map[string]string{"runtime-config": "api/all=true", "feature-gates": "AllAlpha=true,AllBeta=true"}}

// TestBuiltInSchemas proves that the OpenAPI v3 documents that offline
// commands type-check CEL against (staticdiscovery.BuiltInOpenAPI) are
// what a control plane of the client library's version serves with every
// built-in API enabled, cut down by CompactOpenAPI: a document for each
// group-version known offline that the server serves. With -update (`make
// builtin-schemas`) it rewrites the embedded copy from the server. And it
// proves that a custom resource's schema offline, from its CRD's file, is
// the one the server publishes.
func TestBuiltInSchemas(t *testing.T) {
	if !strings.HasPrefix(env.Features.Version, "v"+staticdiscovery.KubeVersion()+".") {
		t.Skipf("the server is %s; the offline schemas are of Kubernetes %s", env.Features.Version, staticdiscovery.KubeVersion())
	}
	e := h.StartControlPlane(t, allAPIs)
	want, missing := servedBuiltInDocuments(t, e)
	for _, gv := range missing {
		if !strings.Contains(gv, "alpha") && !strings.Contains(gv, "beta") {
			t.Errorf("%s is known offline and not served, and not an alpha or beta version", gv)
		}
	}
	if len(want) < 30 {
		t.Fatalf("%d documents served for the built-in group-versions, want every group-version's; none for %v", len(want), missing)
	}
	const file = "zz_generated.openapi.json.gz"
	path := filepath.Join(h.RepoRoot(), "pkg", "staticdiscovery", file)
	if *update {
		data, err := staticdiscovery.EncodeDocuments(want)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d documents, %d bytes; not served: %v", path, len(want), len(data), missing)
		return
	}
	got, err := staticdiscovery.BuiltInOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]bool{}
	for p := range want {
		all[p] = true
	}
	for p := range got {
		all[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(all)) {
		switch g, w := got[p], want[p]; {
		case g == nil:
			t.Errorf("%s: served and not in the embedded copy", p)
		case w == nil:
			t.Errorf("%s: in the embedded copy and not served", p)
		case !bytes.Equal(g, w):
			t.Errorf("%s: the embedded copy differs from what the server serves", p)
		}
	}
	if t.Failed() {
		t.Errorf("pkg/staticdiscovery/%s is out of date with the API server; run `make builtin-schemas`", file)
	}
	if len(missing) > 0 {
		t.Logf("known offline and not served with every API enabled, so left dyn offline: %v", missing)
	}
	t.Run("crd", func(t *testing.T) { testCRDSchemaOffline(t, e) })
}

// gadgetCRD is a CRD whose schema has what the API server changes in the
// schema it publishes: an embedded resource, an int-or-string, fields
// that keep unknown fields, a map list, and a metadata it leaves untyped.
const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {plural: gadgets, kind: Gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          metadata: {type: object}
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, format: int32, minimum: 0}
              port: {x-kubernetes-int-or-string: true}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  spec: {type: object, properties: {image: {type: string}}}
              parts:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, required: [name], properties: {name: {type: string}, at: {type: string, format: date-time}}}
              labels: {type: object, additionalProperties: {type: string}}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// testCRDSchemaOffline installs gadgetCRD on e and compares the schemas
// of its served versions, resolved offline from the CRD's file, with what
// e publishes, less descriptions.
func testCRDSchemaOffline(t *testing.T, e *h.Env) {
	e.InstallCRD(t, gadgetCRD)
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	off, err := resolve.NewOffline("", writeFile(t, "gadgets.yaml", gadgetCRD))
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"v1", "v2"} {
		res := source.Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: version, Resource: "gadgets"}, Kind: "Gadget", Namespaced: true}
		var want *spec.Schema
		// A CRD just created is published a moment later.
		err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			var err error
			want, err = resolve.New(dc).Schema(res)
			return want != nil, err
		})
		if err != nil {
			t.Fatalf("%s: not published: %v", source.GVRString(res.GVR), err)
		}
		got, err := off.Schema(res)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := withoutDescriptions(t, got), withoutDescriptions(t, want); a != b {
			t.Errorf("schema of %s offline differs from the server's\noffline: %s\nserver:  %s", source.GVRString(res.GVR), a, b)
		}
	}
}

// servedBuiltInDocuments returns the compacted OpenAPI v3 documents e
// serves for the group-versions staticdiscovery.BuiltIn lists, and the
// group-versions it serves none for.
func servedBuiltInDocuments(t *testing.T, e *h.Env) (staticdiscovery.Documents, []string) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	builtIn, err := staticdiscovery.BuiltIn()
	if err != nil {
		t.Fatal(err)
	}
	docs := staticdiscovery.Documents{}
	var missing []string
	for _, l := range builtIn {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		p := staticdiscovery.OpenAPIPath(gv)
		served, ok := paths[p]
		if !ok {
			missing = append(missing, l.GroupVersion)
			continue
		}
		doc, err := served.Schema(runtime.ContentTypeJSON)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var kinds []string
		for _, r := range l.APIResources {
			kinds = append(kinds, r.Kind)
		}
		if docs[p], err = staticdiscovery.CompactOpenAPI(doc, gv, kinds); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	return docs, missing
}
