// Package rulefile reads the rules file: strict decoding of rules.yaml
// into the types of package spec (File, Rule; named here too, spec.go),
// with errors that name the file, line and field (Error, FieldError), and
// the JSON Schema of the file (JSONSchema, docs/rules.schema.json).
//
// A reader starts at pkg/rules/spec/types.go (File and Rule, each field's
// doc naming the key it is written as), then Parse (load.go). The schema is stated once,
// in the decoder's tables fileSchema and ruleSchema (schema.go): each
// entry names a field as written, checks its value and fills fields of
// File or Rule, which carry no encoding tags; the value forms of
// annotations and labels (a literal, jsonPath, cel, fromNamespace and
// each entry of pkg/rules/source's table) are the table valueForms
// (decode_metadata.go). JSONSchema (jsonschema.go) generates the schema
// from the same tables, and a test holds tables, structs and docs
// together.
//
// What needs the rules together — that what they write settles, that
// their resources resolve — is checked above, by package rules, which
// loads files through rules.Load and rules.Parse.
//
// The walk of YAML nodes — problems at their line and path, unknown
// fields with a suggestion — is package yamlfield's.
//
// Layer "rules" of deps_test.go: it imports pkg/rules/spec, yamlfield,
// pkg/rules/source and pkg/rules/celexpr (a cel value is compiled as it
// is decoded), and no client.
package rulefile
