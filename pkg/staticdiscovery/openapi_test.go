package staticdiscovery

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

// serverDoc is an OpenAPI v3 document as a server serves one: schemas
// with descriptions, a kind of the group-version, one of another, and
// schemas no kind refers to.
const serverDoc = `{"openapi": "3.0.0", "paths": {"/apis/example.com/v1/widgets": {}}, "components": {"schemas": {
	"com.example.v1.Widget": {"description": "A widget.", "type": "object",
		"x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}],
		"properties": {
			"metadata": {"description": "Standard metadata.", "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}], "default": {}},
			"spec": {"$ref": "#/components/schemas/com.example.v1.WidgetSpec"}}},
	"com.example.v1.WidgetSpec": {"type": "object", "required": ["size"], "properties": {
		"size": {"description": "How big.", "type": "integer", "format": "int32"},
		"description": {"description": "A field named description.", "type": "string", "default": "none"},
		"parts": {"type": "array", "items": {"description": "A part.", "type": "string"}, "x-kubernetes-list-type": "set"},
		"extra": {"type": "object", "additionalProperties": {"description": "Any.", "type": "string"}}}},
	"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"description": "Metadata.", "type": "object", "properties": {
		"name": {"description": "The name.", "type": "string"}}},
	"com.example.v1.WidgetList": {"type": "object",
		"x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "WidgetList"}]},
	"com.example.v1.Gadget": {"type": "object",
		"x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Gadget"}]},
	"com.example.v2.Widget": {"type": "object",
		"x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v2", "kind": "Widget"}]}}}}`

// TestCompactOpenAPI checks that a compacted document keeps the schemas
// of the kinds asked for and those they refer to, less descriptions, and
// that the schema resolved from it is the one resolved from the server's,
// less descriptions.
func TestCompactOpenAPI(t *testing.T) {
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	got, err := CompactOpenAPI([]byte(serverDoc), gv, []string{"Widget"})
	if err != nil {
		t.Fatal(err)
	}
	var d document
	if err := json.Unmarshal(got, &d); err != nil {
		t.Fatal(err)
	}
	want := []string{"com.example.v1.Widget", "com.example.v1.WidgetSpec", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
	if names := slices.Sorted(maps.Keys(d.Components.Schemas)); !slices.Equal(names, want) {
		t.Errorf("schemas %v, want %v", names, want)
	}
	if strings.Contains(string(got), `"description":"`) {
		t.Errorf("a description is left:\n%s", got)
	}
	if !strings.Contains(string(got), `"description":{"type":"string","default":"none"}`) {
		t.Errorf("the field named description is not kept:\n%s", got)
	}
	gvk := gv.WithKind("Widget")
	compacted := resolveFrom(t, got, gvk)
	server := resolveFrom(t, []byte(serverDoc), gvk)
	walkSchema(server, func(s *spec.Schema) { s.Description = "" })
	if a, b := mustJSON(t, compacted), mustJSON(t, server); a != b {
		t.Errorf("resolved from the compacted document:\n%s\nfrom the server's, less descriptions:\n%s", a, b)
	}

	for _, tc := range []struct{ doc, err string }{
		{`{"components": {"schemas": {"a": {"x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}], "$ref": "#/components/schemas/b"}}}}`,
			"components.schemas[b]: referred to and not in the document"},
		{`{"components": {"schemas": {"a": {"x-kubernetes-group-version-kind": "Widget"}}}}`, "components.schemas[a]: x-kubernetes-group-version-kind"},
		{`{"components": []}`, "cannot unmarshal"},
	} {
		if _, err := CompactOpenAPI([]byte(tc.doc), gv, []string{"Widget"}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("CompactOpenAPI(%s) = %v, want an error with %q", tc.doc, err, tc.err)
		}
	}
}

// resolveFrom resolves the schema of gvk from doc, as a server's client
// does.
func resolveFrom(t *testing.T, doc []byte, gvk schema.GroupVersionKind) *spec.Schema {
	t.Helper()
	d, err := NewWithOpenAPI(func() (Documents, error) { return Documents{OpenAPIPath(gvk.GroupVersion()): doc}, nil })
	if err != nil {
		t.Fatal(err)
	}
	s, err := (&resolver.ClientDiscoveryResolver{Discovery: d}).ResolveSchema(gvk)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// TestDocuments checks that documents survive their encoding, and that a
// Discovery serves those it was given, and only from NewWithOpenAPI.
func TestDocuments(t *testing.T) {
	docs := Documents{"api/v1": []byte(`{"components":{}}`), "apis/apps/v1": []byte(`{"openapi":"3.0.0"}`)}
	data, err := EncodeDocuments(docs)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := DecodeDocuments(data)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(decoded, docs, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Errorf("decoded %q, want %q", decoded, docs)
	}
	if _, err := DecodeDocuments([]byte("{}")); err == nil {
		t.Error("DecodeDocuments of what is not gzipped = nil error")
	}

	d, err := NewWithOpenAPI(func() (Documents, error) { return docs, nil })
	if err != nil {
		t.Fatal(err)
	}
	paths, err := d.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(paths)); !slices.Equal(got, []string{"api/v1", "apis/apps/v1"}) {
		t.Fatalf("paths %v", got)
	}
	if doc, err := paths["apis/apps/v1"].Schema("application/json"); err != nil || string(doc) != `{"openapi":"3.0.0"}` {
		t.Errorf("Schema(application/json) = %s, %v", doc, err)
	}
	if _, err := paths["apis/apps/v1"].Schema("application/com.github.proto-openapi.spec.v3@v1.0+protobuf"); err == nil {
		t.Error("Schema(protobuf) = nil error")
	}
	if got := paths["apis/apps/v1"].ServerRelativeURL(); got != "/openapi/v3/apis/apps/v1" {
		t.Errorf("ServerRelativeURL() = %q", got)
	}
	plain, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.OpenAPIV3().Paths(); !errors.Is(err, ErrNoServer) {
		t.Errorf("Paths() of New = %v, want ErrNoServer", err)
	}
}

// TestBuiltInOpenAPI checks that the embedded copy has a document for
// each group-version of the GA built-in resources, and the schema of
// each of their kinds in it.
func TestBuiltInOpenAPI(t *testing.T) {
	docs, err := BuiltInOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	lists, err := BuiltIn()
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewWithOpenAPI(BuiltInOpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	r := &resolver.ClientDiscoveryResolver{Discovery: d}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := docs[OpenAPIPath(gv)]; !ok {
			if !strings.Contains(gv.Version, "alpha") && !strings.Contains(gv.Version, "beta") {
				t.Errorf("no document for %s", gv)
			}
			continue
		}
		for _, res := range l.APIResources {
			s, err := r.ResolveSchema(gv.WithKind(res.Kind))
			if err != nil || s == nil || len(s.Properties) == 0 {
				t.Errorf("schema of %s: %v, %v", gv.WithKind(res.Kind), s, err)
			}
		}
	}
}

// TestCRDSchema checks the schema of a custom resource's objects as a
// server publishes it: metadata, apiVersion and kind typed at the root
// and in embedded resources; nothing but an object without a structural
// schema.
func TestCRDSchema(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         string // the schema, less the GVK extension
	}{
		{name: "structural", schema: `{type: object, properties: {spec: {type: object, properties: {size: {type: integer}, template: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}}}}}`,
			want: `{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},` +
				`"spec":{"type":"object","properties":{"size":{"type":"integer"},"template":{"type":"object","required":["kind","apiVersion"],"properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},` +
				`"metadata":{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}},"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}}}`},
		{name: "int-or-string unfolded", schema: `{type: object, properties: {count: {x-kubernetes-int-or-string: true}}}`,
			want: `{"type":"object","properties":{"apiVersion":{"type":"string"},"count":{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true},` +
				`"kind":{"type":"string"},"metadata":{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}}}`},
		{name: "not structural", schema: `{type: object, properties: {spec: {properties: {a: {type: string}}}}}`, want: `{"type":"object"}`},
		{name: "none", want: `{"type":"object"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1"}
			if tc.schema != "" {
				v.Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{}}
				if err := yaml.Unmarshal([]byte(tc.schema), v.Schema.OpenAPIV3Schema); err != nil {
					t.Fatal(err)
				}
			}
			crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "example.com", Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget"}}}
			s, err := crdSchema(crd, v)
			if err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(t, s.Extensions[extGVK]); got != `[{"group":"example.com","kind":"Widget","version":"v1"}]` {
				t.Errorf("%s = %s", extGVK, got)
			}
			delete(s.Extensions, extGVK)
			if got := mustJSON(t, s); got != tc.want {
				t.Errorf("schema\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
