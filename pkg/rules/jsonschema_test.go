package rules_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

var update = flag.Bool("update", false, "rewrite docs/rules.schema.json from the decoder's tables")

// The committed JSON Schema is the one the decoder's tables generate.
func TestJSONSchema(t *testing.T) {
	want := rulefile.JSONSchema()
	if *update {
		if err := os.WriteFile(schemaFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/rules.schema.json is out of date with the decoder's tables; run `go test ./pkg/rules -run TestJSONSchema -update`")
	}
	compileSchema(t, "") // a valid draft 2020-12 schema
}

// validFiles are the rules files the project ships and the corpus's files
// that load: each must pass both the decoder and the JSON Schema.
func validFiles(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "rules.yaml"), filepath.Join(root, "deploy", "rules.yaml")}
	for _, glob := range []string{filepath.Join(root, "examples", "*.yaml"), filepath.Join("testdata", "conflict", "*.yaml")} {
		more, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		if len(more) == 0 {
			t.Fatalf("no files match %s", glob)
		}
		files = append(files, more...)
	}
	return files
}

func TestJSONSchemaAcceptsValidFiles(t *testing.T) {
	for _, path := range validFiles(t) {
		t.Run(path, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rules.Parse(path, data); err != nil {
				t.Errorf("decoder: %v", err)
			}
			for name, draft := range drafts {
				if err := validateYAML(t, compileSchemaAs(t, draft, ""), data); err != nil {
					t.Errorf("JSON Schema, as draft %s: %#v", name, err)
				}
			}
		})
	}
	for i, data := range fuzzGood {
		if err := validateYAML(t, compileSchema(t, ""), []byte(data)); err != nil {
			t.Errorf("fuzzGood[%d]: JSON Schema: %#v", i, err)
		}
	}
}

// modeline is the comment that points editors to the JSON Schema.
var modeline = regexp.MustCompile(`(?m)^# yaml-language-server: \$schema=(\S+)$`)

// The rules files the project ships point editors to the schema, by a path
// relative to the file.
func TestRulesFilesNameTheSchema(t *testing.T) {
	for _, path := range validFiles(t) {
		if strings.HasPrefix(path, "testdata") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m := modeline.FindSubmatch(data)
		if m == nil {
			t.Errorf("%s: no line %q", path, "# yaml-language-server: $schema=…")
			continue
		}
		if got := filepath.Join(filepath.Dir(path), string(m[1])); got != schemaFile {
			t.Errorf("%s: $schema=%s is %s; want the path of %s relative to the file", path, m[1], got, schemaFile)
		}
	}
}

// Documents that both the decoder and the schema refuse, one rule of the
// format each; the schema refuses them alike read as draft 2020-12, which
// it states, and as draft 7, which editors implement.
func TestJSONSchemaRejectsWhatTheDecoderRejects(t *testing.T) {
	const head = "rules:\n- name: web\n  resources: [pods]\n"
	for _, tc := range []struct {
		name, doc string
		// decoder and schema are substrings of the two errors.
		decoder, schema string
	}{
		{"unknown top-level field", "rule: []\n", "rule: unknown field", "additional properties 'rule' not allowed"},
		{"rules missing", "version: v1\n", "rules: required field is missing", "missing property 'rules'"},
		{"top level a list", "- rules\n", "expected a mapping", "got array, want object"},
		{"version v2", "version: v2\nrules: []\n", "unsupported version", "value must be 'v1'"},
		{"version a number", "version: 1\nrules: []\n", "must be a string", "got number, want string"},
		{"rules a mapping", "rules: {a: b}\n", "must be a list of rules", "got object, want array"},
		{"unknown rule field", head + "  labels: {a: b}\n  resource: [pods]\n", "unknown field (did you mean \"resources\"?)", "additional properties 'resource' not allowed"},
		{"name missing", "rules:\n- resources: [pods]\n  labels: {a: b}\n", "name: required field is missing", "missing property 'name'"},
		{"resources missing", "rules:\n- name: web\n  labels: {a: b}\n", "resources: required field is missing", "missing property 'resources'"},
		{"name not a DNS label", "rules:\n- name: Web\n  resources: [pods]\n  labels: {a: b}\n", "invalid name", "does not match pattern"},
		{"name a number", "rules:\n- name: 1\n  resources: [pods]\n  labels: {a: b}\n", "must be a string", "got number, want string"},
		{"resources empty", "rules:\n- name: web\n  resources: []\n  labels: {a: b}\n", "must name at least one resource", "minItems"},
		{"resources a string", "rules:\n- name: web\n  resources: pods\n  labels: {a: b}\n", "must be a list of resource names", "got string, want array"},
		{"resource with a slash", "rules:\n- name: web\n  resources: [apps/deployments]\n  labels: {a: b}\n", "invalid resource", "does not match pattern"},
		{"resource twice", "rules:\n- name: web\n  resources: [pods, pods]\n  labels: {a: b}\n", "duplicate resource", "items at 0 and 1 are equal"},
		{"sets nothing", head, "sets nothing", "'anyOf' failed"},
		{"bad mode", head + "  mode: Audit\n  labels: {a: b}\n", "unknown mode \"Audit\"", "value must be one of 'enforce', 'audit'"},
		{"mode a list", head + "  mode: [audit]\n  labels: {a: b}\n", "must be a string", "got array, want string"},
		{"namespaces empty", head + "  namespaces: []\n  labels: {a: b}\n", "must not be empty", "minItems"},
		{"empty glob", head + "  names: ['']\n  labels: {a: b}\n", "must not be empty", "minLength"},
		{"selector empty", head + "  selector: ''\n  labels: {a: b}\n", "must not be empty", "minLength"},
		{"selector a list", head + "  selector: [a]\n  labels: {a: b}\n", "must be a string", "got array, want string"},
		{"annotations empty", head + "  annotations: {}\n", "must set at least one annotation", "minProperties"},
		{"annotations a list", head + "  annotations: [a]\n", "must be a mapping", "got array, want object"},
		{"unquoted boolean", head + "  annotations: {a: True}\n", "quote it", "got boolean, want string"},
		{"null value", head + "  annotations: {a: }\n", "got null", "got null, want string"},
		{"bad annotation key", head + "  annotations: {'-a': b}\n", "invalid annotation key", "does not match pattern"},
		{"reserved annotation key", head + "  annotations: {pods.admission.kube-annotator.io/x: b}\n", "reserved annotation key", "'not' failed"},
		{"reserved annotation key upper case", head + "  removeAnnotations: [Pods.Admission.Kube-Annotator.IO/x]\n", "reserved annotation key", "'not' failed"},
		{"key name too long", head + "  labels: {" + strings.Repeat("k", 64) + ": b}\n", "must be no more than 63", "does not match pattern"},
		{"label key upper-case prefix", head + "  labels: {Example.com/a: b}\n", "invalid label key", "does not match pattern"},
		{"bad label value", head + "  labels: {a: 'b c'}\n", "invalid label value", "labelLiteral/pattern"},
		{"label value too long", head + "  labels: {a: " + strings.Repeat("v", 64) + "}\n", "invalid label value", "maxLength: got 64, want 63"},
		{"unknown value form", head + "  labels: {a: {from: x}}\n", "value must be a string, {value", "additional properties 'from' not allowed"},
		{"two value forms", head + "  labels: {a: {value: x, jsonPath: '{.a}'}}\n", "gives both value and jsonPath", "additional properties 'jsonPath' not allowed"},
		{"ifAbsent alone", head + "  labels: {a: {ifAbsent: true}}\n", "none is given", "missing property 'value'"},
		{"ifAbsent a string", head + "  labels: {a: {value: x, ifAbsent: 'yes'}}\n", "must be true or false", "got string, want boolean"},
		{"unknown field next to a form", head + "  labels: {a: {value: x, ifabsent: true}}\n", "unknown field", "additional properties 'ifabsent' not allowed"},
		{"jsonPath without braces", head + "  labels: {a: {jsonPath: .spec.a}}\n", "invalid JSONPath template", "jsonPath/pattern"},
		{"fromNamespace both keys", head + "  labels: {a: {fromNamespace: {label: a, annotation: b}}}\n", "gives both label and annotation", "subschemas 0, 1 matched"},
		{"fromNamespace neither key", head + "  labels: {a: {fromNamespace: {}}}\n", "must name the namespace's key", "missing property 'label'"},
		{"fromNamespace a string", head + "  labels: {a: {fromNamespace: team}}\n", "must be {label: KEY}", "fromNamespace/type]: got string, want object"},
		{"fromNamespace bad key", head + "  labels: {a: {fromNamespace: {label: 'a b'}}}\n", "invalid label key", "labelKey/allOf/0/pattern"},
		{"removeLabels empty", head + "  removeLabels: []\n", "must name at least one label key", "minItems"},
		{"removeLabels twice", head + "  removeLabels: [a, a]\n", "duplicate key", "items at 0 and 1 are equal"},
		{"removeLabels bad key", head + "  removeLabels: ['a b']\n", "invalid label key", "does not match pattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rules.Parse("rules.yaml", []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.decoder) {
				t.Errorf("decoder: got %v, want an error containing %q", err, tc.decoder)
			}
			for name, draft := range drafts {
				err = validateYAML(t, compileSchemaAs(t, draft, ""), []byte(tc.doc))
				if got := fmt.Sprintf("%#v", err); err == nil || errors.Is(err, errNotInstance) || !strings.Contains(got, tc.schema) {
					t.Errorf("JSON Schema, as draft %s: got %s, want an error containing %q", name, got, tc.schema)
				}
			}
		})
	}
}
