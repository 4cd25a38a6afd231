package rulefile

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// fieldExamples holds, for each field of the file, a valid value that fills
// every Go field its table entry names.
var fieldExamples = map[string]string{
	"version":           "v1",
	"rules":             "[{name: a, resources: [pods], labels: {team: web}}]",
	"tenants":           `{resources: [pods], keys: {labels: ["myorg.net/*"]}}`,
	"name":              "web",
	"resources":         "[deployments]",
	"namespaces":        `["team-*"]`,
	"excludeNamespaces": "[team-sandbox]",
	"namespaceSelector": "env=prod",
	"selector":          "app=web",
	"names":             `["web-*"]`,
	"when":              "object.spec.replicas > 2",
	"mode":              "audit",
	"allowOptOut":       "false",
	"podTemplates":      "true",
	"locked":            "{groups: [platform-admins]}",
	"ownerObject":       "{through: [replicasets.apps, rollouts.argoproj.io]}",
	"annotations":       "{owner: web, team: {jsonPath: '{.metadata.labels.team}', default: none, once: true}, id: {cel: 'object.metadata.name'}, cost: {fromNamespace: {annotation: example.com/cost}}, zone: {fromNode: {annotation: example.com/rack}}, unit: {fromOwner: {label: unit}, default: {fromNamespace: {label: unit}, default: none}}, psa: {value: baseline, ifAbsent: true}}",
	"labels":            "{owner: web, team: {jsonPath: '{.metadata.labels.team}', default: none, once: true}, id: {cel: 'object.metadata.name', ifInvalid: hash}, tier: {fromNamespace: {label: tier}}, zone: {fromNode: {label: topology.kubernetes.io/zone}}, unit: {fromOwner: {label: unit}, default: {fromNamespace: {label: unit}, default: none}}, psa: {value: baseline, ifAbsent: true}}",
	"removeAnnotations": "[deprecated.example.com/flag]",
	"removeLabels":      "[legacy]",
	"copy":              `[{fromNamespace: {labels: ["team*"], except: [team-internal]}}, {fromOwner: {annotations: ["example.com/*"], owner: deployments.apps}}]`,
}

// TestSchema keeps the decoder's tables, File and Rule, and their doc
// comments one statement of the file format.
func TestSchema(t *testing.T) {
	docs := structDocs(t)
	checkMapping(t, fileSchema, docs)
	checkMapping(t, ruleSchema, docs)
	for name := range fieldExamples {
		if !slices.Contains(fileSchema.names(), name) && !slices.Contains(ruleSchema.names(), name) {
			t.Errorf("fieldExamples[%q]: the decoder has no such field", name)
		}
	}
}

// checkMapping checks that every field of T is filled by exactly one entry
// of m, that each entry's decoder fills the fields it names and no other,
// and that each field's doc comment names the file field that fills it.
func checkMapping[T any](t *testing.T, m mapping[T], docs map[string]map[string]string) {
	typ := reflect.TypeFor[T]()
	owner := map[string]string{} // Go field → file field
	for _, f := range m {
		t.Run(typ.Name()+"."+f.name, func(t *testing.T) {
			if f.doc == "" || f.value == nil {
				t.Errorf("has no doc or no value schema; the JSON Schema needs both")
			}
			for _, g := range f.fills {
				if !slices.Contains(leafFields(typ), g) {
					t.Errorf("fills %s.%s, which does not exist", typ.Name(), g)
				}
				if prev, dup := owner[g]; dup {
					t.Errorf("fills %s.%s, which %q fills too", typ.Name(), g, prev)
				}
				owner[g] = f.name
			}
			if got := decodeExample(t, f); !slices.Equal(got, f.fills) {
				t.Errorf("decoding %q filled %s.%v; the table says %v", fieldExamples[f.name], typ.Name(), got, f.fills)
			}
		})
	}
	byField := map[string][]string{} // top-level Go field → the file fields filling it
	for _, name := range leafFields(typ) {
		top, _, _ := strings.Cut(name, ".")
		sf, _ := typ.FieldByName(top)
		fileField, ok := owner[name]
		switch {
		case !ok && unfilled[typ.Name()+"."+name] != "":
			continue
		case !ok:
			t.Errorf("%s.%s: no field of the file fills it; add it to the decoder's table", typ.Name(), name)
		case sf.Tag != "":
			t.Errorf("%s.%s: has tag %s; the decoder's table is the only statement of the file's field names", typ.Name(), top, sf.Tag)
		}
		if ok && !slices.Contains(byField[top], fileField) {
			byField[top] = append(byField[top], fileField)
		}
	}
	for top, fileFields := range byField {
		quoted := make([]string, len(fileFields))
		for i, f := range fileFields {
			quoted[i] = fmt.Sprintf("%q", f)
		}
		want := fmt.Sprintf("%s (%s", top, strings.Join(quoted, ", "))
		if doc := docs[typ.Name()][top]; !strings.HasPrefix(doc, want+")") && !strings.HasPrefix(doc, want+",") {
			t.Errorf("%s.%s: doc comment %q must open with %s), naming the file fields that fill it", typ.Name(), top, doc, want)
		}
	}
}

// unfilled are the fields no field of the file fills, and why.
var unfilled = map[string]string{
	"Rule.Annotations.IfInvalid": "an annotation value may be any string: the decoder refuses ifInvalid on one",
	"Rule.Tenant":                "a tenant's rules are merged into the main file's by package tenants, never decoded as such",
}

// leafFields returns the exported fields of typ, in declaration order; a
// field of struct type by each of its own fields, "Labels.From".
func leafFields(typ reflect.Type) []string {
	var out []string
	for sf := range typ.Fields() {
		if !sf.IsExported() {
			continue // not part of the file format, such as File.lines
		}
		if sf.Type.Kind() != reflect.Struct {
			out = append(out, sf.Name)
			continue
		}
		for sub := range sf.Type.Fields() {
			out = append(out, sf.Name+"."+sub.Name)
		}
	}
	return out
}

// decodeExample decodes f's example into a zero T and returns the fields it
// filled, in declaration order.
func decodeExample[T any](t *testing.T, f field[T]) []string {
	t.Helper()
	example, ok := fieldExamples[f.name]
	if !ok {
		t.Fatalf("no example value for %q in fieldExamples", f.name)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(example), &doc); err != nil {
		t.Fatalf("example %q: %v", example, err)
	}
	var into T
	d := &decoder{names: map[string]int{}}
	f.decode(d, &into, doc.Content[0], f.name)
	if len(d.Errs) > 0 {
		t.Fatalf("example %q: %v", example, d.Errs)
	}
	var filled []string
	v := reflect.ValueOf(into)
	for _, name := range leafFields(v.Type()) {
		if !v.FieldByIndex(fieldIndex(v.Type(), name)).IsZero() {
			filled = append(filled, name)
		}
	}
	return filled
}

// fieldIndex returns the index of the field name of typ, "Labels.From" as
// leafFields names it.
func fieldIndex(typ reflect.Type, name string) []int {
	var index []int
	for part := range strings.SplitSeq(name, ".") {
		sf, _ := typ.FieldByName(part)
		index = append(index, sf.Index...)
		typ = sf.Type
	}
	return index
}

// structDocs returns the doc comments of the fields of the package's
// structs, by struct and field name.
func structDocs(t *testing.T) map[string]map[string]string {
	t.Helper()
	paths, err := filepath.Glob("../spec/*.go") // the types the decoder fills
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]map[string]string{}
	fset := token.NewFileSet()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				docs[ts.Name.Name] = map[string]string{}
				for _, fl := range st.Fields.List {
					for _, name := range fl.Names {
						docs[ts.Name.Name][name.Name] = strings.Join(strings.Fields(fl.Doc.Text()), " ")
					}
				}
			}
			return false
		})
	}
	return docs
}
