package staticdiscovery

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the built-in OpenAPI documents
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Documents are OpenAPI v3 documents by the path a server serves each
// at under /openapi/v3/: "api/v1", "apis/apps/v1".
type Documents map[string][]byte

// builtInOpenAPIFile is the embedded copy of the built-in documents: a
// JSON object of Documents, gzipped.
const builtInOpenAPIFile = "zz_generated.openapi.json.gz"

//go:embed zz_generated.openapi.json.gz
var builtInOpenAPI []byte

// BuiltInOpenAPI returns the OpenAPI v3 documents of the group-versions of
// BuiltIn, as CompactOpenAPI cuts down those an API server of KubeVersion
// serves with every built-in API enabled. A group-version that no such
// server serves has none. The documents are shared: callers must not
// modify them.
//
// The copy is zz_generated.openapi.json.gz, which the end-to-end test
// TestBuiltInSchemas keeps equal to what a control plane of the version
// serves (`make builtin-schemas` rewrites it).
var BuiltInOpenAPI = sync.OnceValues(func() (Documents, error) {
	docs, err := DecodeDocuments(builtInOpenAPI)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", builtInOpenAPIFile, err)
	}
	return docs, nil
})

// DecodeDocuments decodes documents that EncodeDocuments encoded.
func DecodeDocuments(data []byte) (Documents, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	var docs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &docs); err != nil {
		return nil, err
	}
	out := make(Documents, len(docs))
	for path, doc := range docs {
		out[path] = doc
	}
	return out, nil
}

// EncodeDocuments encodes docs as the embedded copy keeps them: one JSON
// object by path, gzipped.
func EncodeDocuments(docs Documents) ([]byte, error) {
	raw := make(map[string]json.RawMessage, len(docs))
	for path, doc := range docs {
		raw[path] = doc
	}
	js, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(js); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// OpenAPIPath is the path of gv's document among a server's OpenAPI v3
// documents.
func OpenAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// componentsPrefix starts a reference to a schema of a document.
const componentsPrefix = "#/components/schemas/"

// extGVK is the extension that names the kinds a schema is of.
const extGVK = "x-kubernetes-group-version-kind"

// document is an OpenAPI v3 document, as far as schemas go.
type document struct {
	Components struct {
		Schemas map[string]*spec.Schema `json:"schemas"`
	} `json:"components"`
}

// CompactOpenAPI returns the part of the OpenAPI v3 document doc, of the
// group-version gv, that types the objects of kinds: their schemas and
// those they refer to, without descriptions. What a type-check reads of
// them is unchanged, as is what resolves the schema of a kind from it (a
// schema whose x-kubernetes-group-version-kind names the kind, its
// references resolved). It is how the embedded copy of the built-in
// documents is made.
func CompactOpenAPI(doc []byte, gv schema.GroupVersion, kinds []string) ([]byte, error) {
	var d document
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	var roots []string
	for _, name := range slices.Sorted(maps.Keys(d.Components.Schemas)) {
		var gvks []metav1.GroupVersionKind
		if err := d.Components.Schemas[name].Extensions.GetObject(extGVK, &gvks); err != nil {
			return nil, fmt.Errorf("components.schemas[%s]: %s: %w", name, extGVK, err)
		}
		if slices.ContainsFunc(gvks, func(g metav1.GroupVersionKind) bool {
			return g.Group == gv.Group && g.Version == gv.Version && slices.Contains(kinds, g.Kind)
		}) {
			roots = append(roots, name)
		}
	}
	return compact(d.Components.Schemas, roots)
}

// compact returns a document of the schemas named roots, and of those
// they refer to, among schemas, without descriptions.
func compact(schemas map[string]*spec.Schema, roots []string) ([]byte, error) {
	var out document
	out.Components.Schemas = map[string]*spec.Schema{}
	todo := slices.Clone(roots)
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if _, done := out.Components.Schemas[name]; done {
			continue
		}
		s, ok := schemas[name]
		if !ok {
			return nil, fmt.Errorf("components.schemas[%s]: referred to and not in the document", name)
		}
		s, err := withoutDescriptions(s)
		if err != nil {
			return nil, fmt.Errorf("components.schemas[%s]: %w", name, err)
		}
		out.Components.Schemas[name] = s
		walkSchema(s, func(s *spec.Schema) {
			if ref := s.Ref.String(); strings.HasPrefix(ref, componentsPrefix) {
				todo = append(todo, strings.TrimPrefix(ref, componentsPrefix))
			}
		})
	}
	return json.Marshal(out)
}

// withoutDescriptions returns a copy of s without its descriptions and
// those of the schemas in it.
func withoutDescriptions(s *spec.Schema) (*spec.Schema, error) {
	// A deep copy: a schema's JSON round trip keeps all it holds.
	js, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var c spec.Schema
	if err := json.Unmarshal(js, &c); err != nil {
		return nil, err
	}
	walkSchema(&c, func(s *spec.Schema) { s.Description = "" })
	return &c, nil
}

// walkSchema calls fn on s and on every schema in it, each before those
// in it. fn may change the schema it is given.
func walkSchema(s *spec.Schema, fn func(*spec.Schema)) {
	if s == nil {
		return
	}
	fn(s)
	each := func(m map[string]spec.Schema) {
		for k, p := range m {
			walkSchema(&p, fn)
			m[k] = p
		}
	}
	each(s.Properties)
	each(s.PatternProperties)
	each(s.Definitions)
	for _, l := range [][]spec.Schema{s.AllOf, s.OneOf, s.AnyOf} {
		for i := range l {
			walkSchema(&l[i], fn)
		}
	}
	walkSchema(s.Not, fn)
	if s.Items != nil {
		walkSchema(s.Items.Schema, fn)
		for i := range s.Items.Schemas {
			walkSchema(&s.Items.Schemas[i], fn)
		}
	}
	for _, sb := range []*spec.SchemaOrBool{s.AdditionalProperties, s.AdditionalItems} {
		if sb != nil {
			walkSchema(sb.Schema, fn)
		}
	}
	for k, d := range s.Dependencies {
		walkSchema(d.Schema, fn)
		s.Dependencies[k] = d
	}
}

// openAPIClient serves documents as a server's OpenAPI v3 client would:
// each at its path, with a URL that stays the same as the document does.
type openAPIClient struct {
	docs func() (Documents, error)
}

// Paths returns the documents by path.
func (c openAPIClient) Paths() (map[string]openapi.GroupVersion, error) {
	docs, err := c.docs()
	if err != nil {
		return nil, err
	}
	out := make(map[string]openapi.GroupVersion, len(docs))
	for path, doc := range docs {
		out[path] = documentGroupVersion{path: path, doc: doc}
	}
	return out, nil
}

// documentGroupVersion is one document of an openAPIClient.
type documentGroupVersion struct {
	path string
	doc  []byte
}

// Schema returns the document, in JSON, the one content type it has.
func (g documentGroupVersion) Schema(contentType string) ([]byte, error) {
	if contentType != runtime.ContentTypeJSON {
		return nil, fmt.Errorf("OpenAPI v3 document %s: content type %q: known offline in %s only", g.path, contentType, runtime.ContentTypeJSON)
	}
	return g.doc, nil
}

// ServerRelativeURL returns where a server serves the document.
func (g documentGroupVersion) ServerRelativeURL() string { return "/openapi/v3/" + g.path }
