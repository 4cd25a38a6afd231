package resolve

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
)

// schemaEntry is a schema fetched for a kind: the schema (nil when the
// server publishes none) and the address of the document it came from,
// which changes with its content.
type schemaEntry struct {
	url    string
	schema *spec.Schema
}

// Schema returns the OpenAPI v3 schema the API server publishes for the
// objects of res, with its references resolved, for rules.TypeCheck; nil
// when it publishes none. Offline (NewOffline), the schema is the one a
// server would publish, from the documents staticdiscovery keeps. Its
// group-version's document is fetched once until Reset, and parsed again
// only when the server says it changed, so that the periodic look-ups of
// a reloader cost one small request.
func (r *Resolver) Schema(res source.Resource) (*spec.Schema, error) {
	gvk := res.GVR.GroupVersion().WithKind(res.Kind)
	paths, err := r.cached.OpenAPIV3().Paths()
	if err != nil {
		return nil, fmt.Errorf("OpenAPI v3 of the server: %w", err)
	}
	gv, ok := paths[staticdiscovery.OpenAPIPath(gvk.GroupVersion())]
	if !ok {
		return nil, nil
	}
	url := gv.ServerRelativeURL()
	r.mu.Lock()
	e, ok := r.schemas[gvk]
	r.mu.Unlock()
	if ok && e.url == url {
		return e.schema, nil
	}
	s, err := (&resolver.ClientDiscoveryResolver{Discovery: r.cached}).ResolveSchema(gvk)
	if errors.Is(err, resolver.ErrSchemaNotFound) {
		s, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("OpenAPI v3 schema of %s: %w", gvk, err)
	}
	r.mu.Lock()
	if r.schemas == nil {
		r.schemas = map[schema.GroupVersionKind]schemaEntry{}
	}
	r.schemas[gvk] = schemaEntry{url: url, schema: s}
	r.mu.Unlock()
	return s, nil
}
