package celexpr

import (
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// OpenAPI extensions the conversion reads.
const (
	extPreserveUnknownFields = "x-kubernetes-preserve-unknown-fields"
	extIntOrString           = "x-kubernetes-int-or-string"
	extEmbeddedResource      = "x-kubernetes-embedded-resource"
)

// ObjectDeclType returns the CEL type of objects whose OpenAPI schema is s
// (with its references resolved), named after kind, as admission policies
// type object (common.SchemaDeclType) but for what the controller
// evaluates: the object's content as JSON decodes it. So a formatted
// string (a timestamp, a duration, bytes) is a string, and a part of the
// object whose fields the schema does not list — preserved unknown
// fields, a free-form object, a schema without a type — is dyn rather
// than an object without fields. It returns nil when s types nothing.
func ObjectDeclType(s *spec.Schema, kind string) *apiservercel.DeclType {
	if s == nil {
		return nil
	}
	evaluated := asEvaluated(s, true)
	if len(evaluated.Type) != 1 || evaluated.Type[0] != "object" {
		return nil
	}
	dt := common.SchemaDeclType(&openapi.Schema{Schema: evaluated}, false)
	if dt == nil {
		return nil
	}
	if kind == "" {
		kind = "Object"
	}
	return dt.MaybeAssignTypeName(kind)
}

// dynSchema is a schema that common.SchemaDeclType turns into dyn: an
// int-or-string, whose checks are all left to evaluation.
func dynSchema() *spec.Schema {
	return &spec.Schema{VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{extIntOrString: true}}}
}

// asEvaluated returns a copy of s in which every part that the checker
// cannot type as the controller evaluates it is dyn (see ObjectDeclType).
// A resource (the root, or an embedded resource) has apiVersion and kind,
// and a metadata that is dyn unless the schema lists its fields.
func asEvaluated(s *spec.Schema, resource bool) *spec.Schema {
	if s == nil || s.Extensions != nil && (isTrue(s.Extensions[extPreserveUnknownFields]) || isTrue(s.Extensions[extIntOrString])) {
		return dynSchema()
	}
	if len(s.Type) != 1 {
		return dynSchema()
	}
	out := &spec.Schema{SchemaProps: spec.SchemaProps{Type: s.Type, Format: s.Format, Required: s.Required}}
	resource = resource || s.Extensions != nil && isTrue(s.Extensions[extEmbeddedResource])
	switch s.Type[0] {
	case "string":
		switch s.Format {
		case "date", "date-time", "duration", "byte":
			out.Format = "" // JSON gives the controller a string
		}
	case "array":
		if s.Items == nil || s.Items.Schema == nil {
			return dynSchema()
		}
		out.Items = &spec.SchemaOrArray{Schema: asEvaluated(s.Items.Schema, false)}
	case "object":
		return objectAsEvaluated(s, out, resource)
	}
	return out
}

// objectAsEvaluated completes out, the copy of s, an object schema, for
// asEvaluated.
func objectAsEvaluated(s, out *spec.Schema, resource bool) *spec.Schema {
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		out.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: asEvaluated(s.AdditionalProperties.Schema, false)}
		return out
	}
	if len(s.Properties) == 0 && !resource {
		return dynSchema() // a free-form object
	}
	out.Properties = make(map[string]spec.Schema, len(s.Properties)+3)
	for name, p := range s.Properties {
		out.Properties[name] = *asEvaluated(&p, false)
	}
	if resource {
		for _, name := range []string{"apiVersion", "kind"} {
			if _, ok := out.Properties[name]; !ok {
				out.Properties[name] = *spec.StringProperty()
			}
		}
		if md, ok := s.Properties["metadata"]; !ok || len(md.Properties) == 0 {
			out.Properties["metadata"] = *dynSchema()
		}
	}
	return out
}

// isTrue reports whether an extension's value is the boolean true.
func isTrue(v any) bool {
	b, ok := v.(bool)
	return ok && b
}
