package rules_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// schemaFile is the committed JSON Schema, relative to this package.
var schemaFile = filepath.Join("..", "..", "docs", "rules.schema.json")

// compiledSchemas holds the JSON Schema that rulefile.JSONSchema generates,
// compiled by a JSON Schema validator, by schemaKey.
var compiledSchemas sync.Map

// schemaKey names a compiled schema: the draft it is read as, and the
// location of the part compiled: "" for the whole file,
// "#/$defs/labelKey" for a part of it.
type schemaKey struct {
	draft    *jsonschema.Draft
	fragment string
}

// drafts are the drafts the schema must mean the same in: the one it
// states, and draft 7, which the YAML language server in editors
// implements.
var drafts = map[string]*jsonschema.Draft{"2020-12": jsonschema.Draft2020, "7": jsonschema.Draft7}

// compileSchema compiles the part of the generated JSON Schema at fragment
// ("" for the whole), as it states: draft 2020-12.
func compileSchema(t testing.TB, fragment string) *jsonschema.Schema {
	t.Helper()
	return compileSchemaAs(t, jsonschema.Draft2020, fragment)
}

// compileSchemaAs compiles the part of the generated JSON Schema at
// fragment, read as draft.
func compileSchemaAs(t testing.TB, draft *jsonschema.Draft, fragment string) *jsonschema.Schema {
	t.Helper()
	key := schemaKey{draft, fragment}
	if s, ok := compiledSchemas.Load(key); ok {
		return s.(*jsonschema.Schema)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(rulefile.JSONSchema()))
	if err != nil {
		t.Fatalf("the generated JSON Schema is not JSON: %v", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		t.Fatalf("the generated JSON Schema is not an object")
	}
	if draft != jsonschema.Draft2020 {
		delete(obj, "$schema") // read as the compiler's default draft
	}
	abs, err := filepath.Abs(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(draft)
	if err := c.AddResource(abs, obj); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(abs + fragment)
	if err != nil {
		t.Fatalf("compile the generated JSON Schema%s: %v", fragment, err)
	}
	compiledSchemas.Store(key, s)
	return s
}

// validateYAML validates the first document of a YAML file against the
// schema; the error is a validation error, or says why the file is no
// JSON Schema instance (errNotInstance).
func validateYAML(t testing.TB, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := yamlInstance(data)
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// errNotInstance says that a file cannot be read as a JSON Schema instance:
// it is not YAML, or expands past the decoder's bound on values.
var errNotInstance = errors.New("not a JSON Schema instance")

// yamlInstance reads a YAML document as editors hand it to a JSON Schema
// validator: YAML 1.2 types (a timestamp is a string), keys as written,
// aliases expanded.
func yamlInstance(data []byte) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotInstance, err)
	}
	if doc.Kind == 0 {
		return nil, fmt.Errorf("%w: empty", errNotInstance)
	}
	budget := 20_000 // as the decoder's maxVisits
	v, err := nodeValue(&doc, &budget)
	if err != nil {
		return nil, err
	}
	// Through JSON, so that numbers are what the validator expects.
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotInstance, err)
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// nodeValue converts n, spending one of budget per value visited.
func nodeValue(n *yaml.Node, budget *int) (any, error) {
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("%w: too many values counting alias expansions", errNotInstance)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		return nodeValue(n.Content[0], budget)
	case yaml.AliasNode:
		return nodeValue(n.Alias, budget)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := nodeValue(item, budget)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			for k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			v, err := nodeValue(n.Content[i+1], budget)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v // a JSON object's keys are strings: 8080 is "8080"
		}
		return out, nil
	}
	return scalarValue(n), nil
}

// scalarValue is a scalar as YAML 1.2's core schema reads it.
func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		b, _ := strconv.ParseBool(strings.ToLower(n.Value))
		return b
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			// JSON has no such number; the schema constrains no number,
			// so any number stands for it.
			return 0
		}
		return f
	}
	return n.Value // strings, timestamps and unknown tags
}
