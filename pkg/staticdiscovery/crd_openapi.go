package staticdiscovery

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// objectMetaSchema is the schema of the metadata of every object, among
// the built-in documents.
const objectMetaSchema = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// crdSchema returns the schema of the objects of crd at version, as the
// API server publishes it in its OpenAPI v3 document (the apiextensions
// API server's openapi/builder, less descriptions): its structural
// schema, unfolded, with apiVersion, kind and metadata typed as those of
// every object, at the root and in each embedded resource. A version
// without a schema, or with one that is not structural, which no server
// accepts from a v1 CRD, is an object the server lists no field of.
func crdSchema(crd *apiextensionsv1.CustomResourceDefinition, version apiextensionsv1.CustomResourceDefinitionVersion) (*spec.Schema, error) {
	ret := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}
	if version.Schema != nil && version.Schema.OpenAPIV3Schema != nil {
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(version.Schema, internal, nil); err != nil {
			return nil, err
		}
		if s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema); err == nil && len(structuralschema.ValidateStructural(nil, s)) == 0 {
			ret = s.Unfold().ToKubeOpenAPI()
			withTypeMeta(ret)
			addEmbeddedTypeMeta(ret)
		}
	}
	ret.AddExtension(extGVK, []any{map[string]any{"group": crd.Spec.Group, "version": version.Name, "kind": crd.Spec.Names.Kind}})
	return ret, nil
}

// withTypeMeta sets s's apiVersion and kind to strings and its metadata
// to the schema of every object's.
func withTypeMeta(s *spec.Schema) {
	s.SetProperty("metadata", *spec.RefSchema(componentsPrefix + objectMetaSchema))
	s.SetProperty("apiVersion", *spec.StringProperty())
	s.SetProperty("kind", *spec.StringProperty())
}

// addEmbeddedTypeMeta gives each embedded resource in s (one marked
// x-kubernetes-embedded-resource) an apiVersion and kind, which it
// requires, and the metadata of every object.
func addEmbeddedTypeMeta(s *spec.Schema) {
	if s == nil {
		return
	}
	for k, p := range s.Properties {
		addEmbeddedTypeMeta(&p)
		s.Properties[k] = p
	}
	if s.Items != nil {
		addEmbeddedTypeMeta(s.Items.Schema)
	}
	if s.AdditionalProperties != nil {
		addEmbeddedTypeMeta(s.AdditionalProperties.Schema)
	}
	if embedded, ok := s.Extensions.GetBool(extEmbeddedResource); ok && embedded {
		withTypeMeta(s)
		for _, name := range []string{"kind", "apiVersion"} {
			if !slices.Contains(s.Required, name) {
				s.Required = append(s.Required, name)
			}
		}
	}
}

// extEmbeddedResource marks an object that is a resource of its own.
const extEmbeddedResource = "x-kubernetes-embedded-resource"

// crdModelName is the name of the schema of a custom resource's kind in
// its document: the group reversed, the version and the kind.
func crdModelName(gvk schema.GroupVersionKind) string {
	parts := strings.Split(gvk.Group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + gvk.Version + "." + gvk.Kind
}

// CRDSchemas are the schemas of the objects of custom resources, by
// group-version and kind, as ReadCRDs reads them from CRDs.
type CRDSchemas map[schema.GroupVersion]map[string]*spec.Schema

// Documents returns the OpenAPI v3 documents of the group-versions of s,
// as a server publishes them: each with the schemas of its kinds and the
// built-in schemas of the metadata every object has.
func (s CRDSchemas) Documents() (Documents, error) {
	if len(s) == 0 {
		return nil, nil
	}
	builtIn, err := BuiltInOpenAPI()
	if err != nil {
		return nil, err
	}
	core := OpenAPIPath(schema.GroupVersion{Version: "v1"})
	var d document
	if err := json.Unmarshal(builtIn[core], &d); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", builtInOpenAPIFile, core, err)
	}
	docs := Documents{}
	for gv, kinds := range s {
		all := maps.Clone(d.Components.Schemas)
		var roots []string
		for kind, ks := range kinds {
			name := crdModelName(gv.WithKind(kind))
			all[name] = ks
			roots = append(roots, name)
		}
		if docs[OpenAPIPath(gv)], err = compact(all, roots); err != nil {
			return nil, fmt.Errorf("OpenAPI v3 document of %s: %w", gv, err)
		}
	}
	return docs, nil
}
