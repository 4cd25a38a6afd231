package rulefile

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/jsonschema"
	"github.com/kube-annotator/kube-annotator/pkg/rules/labelvalue"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Names of the schema's $defs.
const (
	defRule          = "rule"
	defJSONPath      = "jsonPath"
	defFromNamespace = "fromNamespace"
	defLabelLiteral  = "labelLiteral"
)

// jsonSchema is a JSON Schema, as package jsonschema writes it.
type jsonSchema = jsonschema.Schema

// closed is the schema false: as additionalProperties, no field but those
// listed.
var closed = jsonschema.Closed

// ref refers to the $def name.
func ref(name string) *jsonSchema { return jsonschema.Ref(name) }

// keyDef and valueDef name the $defs of a key of kind and of its value in
// an annotations or labels mapping.
func keyDef(kind string) string   { return kind + "Key" }
func valueDef(kind string) string { return kind + "Value" }

// defaultDef names the $def of the default of a computed value of kind.
func defaultDef(kind string) string { return kind + "Default" }

// aKind is "an annotation" or "a label".
func aKind(kind string) string {
	if kind == AnnotationKind {
		return "an annotation"
	}
	return "a label"
}

// JSONSchema returns the JSON Schema (draft 2020-12) of a rules file,
// generated from the decoder's tables (fileSchema, ruleSchema and
// valueForms), as indented JSON ending in a newline. Editors validate and
// complete rules files with it. It states what a JSON Schema can: fields,
// types, required fields, enums, and the formats of names, keys and label
// values; the checks only the decoder makes are listed in docs/rules.md
// ("Editor support"). It uses only keywords that mean the same in draft 7,
// which the YAML language server in editors implements.
func JSONSchema() []byte {
	root := objectSchema(fileSchema)
	root.Schema = jsonschema.Dialect
	root.Title = "kube-annotator rules file"
	root.Description = "Rules saying which annotations and labels the objects they select must carry (docs/rules.md). " +
		"`kube-annotator check --offline --rules FILE` checks what this schema cannot."
	rule := objectSchema(ruleSchema)
	rule.Description = "A rule: the objects it selects (selection fields combine with AND) and the keys it sets or removes; it gives at least one of " + setters + "."
	for _, f := range ruleSchema {
		if f.sets {
			rule.AnyOf = append(rule.AnyOf, &jsonSchema{Required: []string{f.name}})
		}
	}
	root.Defs = map[string]*jsonSchema{
		defRule:          rule,
		defJSONPath:      jsonPathSchema(),
		defFromNamespace: fromNamespaceSchema(),
		defLabelLiteral: {Type: "string", Pattern: jsonschema.LabelValuePattern, MaxLength: validation.LabelValueMaxLength,
			Description: "A label value: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit; or empty."},
	}
	for _, src := range source.Related() {
		root.Defs[src.Field] = objectKeySchema(src.What)
	}
	root.Defs[source.Owner.Field] = ownerSchema()
	root.Defs[source.Ref.Field] = refSchema()
	for _, kind := range []string{AnnotationKind, LabelKind} {
		root.Defs[keyDef(kind)] = jsonschema.MetadataKey(aKind(kind), kind == AnnotationKind, patch.MarkerDomain)
		root.Defs[valueDef(kind)] = valueSchema(kind)
		root.Defs[defaultDef(kind)] = defaultSchema(kind)
	}
	return root.Encode()
}

// objectSchema is the schema of a mapping with the fields of m: each
// field's value schema and doc, the required fields, and no other field.
func objectSchema[T any](m mapping[T]) *jsonSchema {
	s := &jsonSchema{Type: "object", Properties: map[string]*jsonSchema{}, AdditionalProperties: closed}
	for _, f := range m {
		v := *f.value
		v.Description = f.doc
		s.Properties[f.name] = &v
		if f.required {
			s.Required = append(s.Required, f.name)
		}
	}
	return s
}

// globsSchema is a non-empty list of globs.
func globsSchema() *jsonSchema {
	return &jsonSchema{Type: "array", MinItems: 1, Items: &jsonSchema{Type: "string", MinLength: 1}}
}

// selectorSchema is a label selector.
func selectorSchema() *jsonSchema { return &jsonSchema{Type: "string", MinLength: 1} }

// keysSchema is a non-empty list of distinct keys of kind.
func keysSchema(kind string) *jsonSchema {
	return &jsonSchema{Type: "array", MinItems: 1, UniqueItems: true, Items: ref(keyDef(kind))}
}

// metadataSchema is an annotations or labels mapping: keys of kind to
// their values.
func metadataSchema(kind string) *jsonSchema {
	return &jsonSchema{Type: "object", MinProperties: 1, PropertyNames: ref(keyDef(kind)), AdditionalProperties: ref(valueDef(kind))}
}

// literalSchema is a literal value of a key of kind.
func literalSchema(kind string) *jsonSchema {
	if kind == LabelKind {
		return ref(defLabelLiteral)
	}
	return &jsonSchema{Type: "string"}
}

// valueSchema is the value of a key of kind: a string, or exactly one of
// valueForms, with ifAbsent, a computed one with default, and a computed
// one of a label with ifInvalid.
func valueSchema(kind string) *jsonSchema {
	literal := literalSchema(kind)
	literal.Description = "A literal value. Quote values YAML would read as another type: \"True\", \"1\"."
	s := &jsonSchema{Description: "The value of " + aKind(kind) + ": " + valueFormsHow + ".", OneOf: []*jsonSchema{literal}}
	for _, f := range valueForms {
		form := formSchema(f, kind)
		form.Properties[ifAbsentField] = &jsonSchema{Type: "boolean",
			Description: "true sets the key only on objects that lack it: a present value is never changed."}
		s.OneOf = append(s.OneOf, form)
	}
	return s
}

// defaultSchema is the default of a computed value of kind: a literal, or
// a computed value form that is not selfContained, with its own default.
func defaultSchema(kind string) *jsonSchema {
	literal := literalSchema(kind)
	literal.Description = "The value set when the source is missing, instead of leaving the key unset."
	s := &jsonSchema{Description: "What sets the key when the source is missing (or, for a label, its value is not valid): " +
		fmt.Sprintf("a literal, or another value form read then, with its own default (at most %d forms after the key's own).", spec.MaxFallbacks),
		OneOf: []*jsonSchema{literal}}
	for _, f := range valueForms {
		if !f.selfContained {
			s.OneOf = append(s.OneOf, formSchema(f, kind))
		}
	}
	return s
}

// formSchema is the mapping of value form f of a key of kind, without
// ifAbsent.
func formSchema(f valueForm, kind string) *jsonSchema {
	form := &jsonSchema{
		Type: "object", Description: f.doc, Required: []string{f.name}, AdditionalProperties: closed,
		Properties: map[string]*jsonSchema{f.name: f.value(kind)},
	}
	if f.computed {
		form.Properties[defaultField] = ref(defaultDef(kind))
		form.Properties[onceField] = onceSchema()
	}
	if f.computed && kind == LabelKind {
		form.Properties[ifInvalidField] = &jsonSchema{Type: "string", Enum: labelvalue.Modes,
			Description: "How a value read that is no valid label value is made one, instead of leaving the key unset: " +
				"truncate keeps its first 63 characters; sanitize also replaces each run of other characters than letters, digits, '-', '_' and '.' with '-'; " +
				"hash sanitizes and ends it with a hash of the whole value."}
	}
	return form
}

// jsonPathSchema is the template of {jsonPath: …}.
func jsonPathSchema() *jsonSchema {
	return &jsonSchema{Type: "string", Pattern: `\{`,
		Description: "A kubectl JSONPath template, such as '{.metadata.labels.team}'; a plain string without {…} is a literal, not a template."}
}

// fromNamespaceSchema is the value of {fromNamespace: …}: one key of the
// namespace.
func fromNamespaceSchema() *jsonSchema { return objectKeySchema("the namespace") }

// objectKeySchema is one key of another object, named by of: the value of
// {fromNamespace: …} or of a source.Source's form.
func objectKeySchema(of string) *jsonSchema {
	s := &jsonSchema{Type: "object", Properties: map[string]*jsonSchema{}, AdditionalProperties: closed,
		Description: strings.ToUpper(of[:1]) + possessive(of)[1:] + " key to read: {label: KEY} or {annotation: KEY}."}
	for _, kind := range namespaceKeyKinds {
		s.Properties[kind] = ref(keyDef(kind))
		s.OneOf = append(s.OneOf, &jsonSchema{Required: []string{kind}})
	}
	return s
}

// resourcePattern is a non-empty name without the characters that
// decoder.resources refuses.
const resourcePattern = `^[^ \t\n/,]+$`
