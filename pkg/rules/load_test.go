package rules_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// head starts a file whose one rule's annotations begin on line 5.
const head = "rules:\n- name: a\n  resources: [pods]\n  annotations:\n"

// rule is a valid one-line rule named name, for files that need several.
func rule(name string) string {
	return "- {name: " + name + ", resources: [pods], annotations: {a: b}}\n"
}

// checkLines asserts that err is a *rulefile.Error for "rules.yaml" whose lines
// are want, in order. A want line "prefix…substring" matches a line that
// starts with prefix and contains substring after it; it is used where the
// message comes from apimachinery and is long.
func checkLines(t *testing.T, err error, want []string) {
	t.Helper()
	var rerr *rulefile.Error
	if !errors.As(err, &rerr) {
		t.Fatalf("error = %v (%T), want a *rulefile.Error", err, err)
	}
	if rerr.File != "rules.yaml" || len(rerr.Fields) != len(want) {
		t.Errorf("Error{File: %q, %d Fields}, want File %q and %d Fields", rerr.File, len(rerr.Fields), "rules.yaml", len(want))
	}
	got := strings.Split(err.Error(), "\n")
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			t.Errorf("missing line %d: %s", i, want[i])
		case i >= len(want):
			t.Errorf("unexpected line %d: %s", i, got[i])
		case !lineMatches(got[i], want[i]):
			t.Errorf("line %d:\n got: %s\nwant: %s", i, got[i], want[i])
		}
	}
}

func lineMatches(got, want string) bool {
	prefix, sub, partial := strings.Cut(want, "…")
	if !partial {
		return got == want
	}
	rest, ok := strings.CutPrefix(got, prefix)
	return ok && strings.Contains(rest, sub)
}

func TestParseErrors(t *testing.T) {
	big := strings.Repeat("x", 128<<10)
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"unquoted boolean", head + "    sample-controller: True\n",
			[]string{`rules.yaml:5: rules[0].annotations.sample-controller: value must be a string; quote it: "True"`}},
		{"unquoted numbers", head + "    one: 1\n    float: 1.0\n    hex: 0x1F\n", []string{
			`rules.yaml:5: rules[0].annotations.one: value must be a string; quote it: "1"`,
			`rules.yaml:6: rules[0].annotations.float: value must be a string; quote it: "1.0"`,
			`rules.yaml:7: rules[0].annotations.hex: value must be a string; quote it: "0x1F"`}},
		{"null values", head + "    a: null\n    b: ~\n    c:\n", []string{
			`rules.yaml:5: rules[0].annotations.a: value must be a string, got null; write "" for an empty value`,
			`rules.yaml:6: rules[0].annotations.b: value must be a string, got null; write "" for an empty value`,
			`rules.yaml:7: rules[0].annotations.c: value must be a string, got null; write "" for an empty value`}},
		{"list and mapping values", head + "    a: [x]\n    b: {x: y}\n    c: 2001-12-14\n", []string{
			`rules.yaml:5: rules[0].annotations.a: value must be a string, got a list`,
			`rules.yaml:6: rules[0].annotations.b: value must be a string, {value: "…"}, the same, or {jsonPath: '{.path.to.field}'} to read it from the object, or {cel: "…"} to compute it with a CEL expression, or {fromNamespace: {label: KEY}} to read a label (or annotation) of its namespace, or {fromNode: {label: KEY}} to read a label (or annotation) of a Pod's Node, or {fromOwner: {label: KEY}} to read a label (or annotation) of its controller owner, or {fromRef: {resource: RESOURCE, field: PATH, label: KEY}} to read a label (or annotation) of an object it refers to (any mapping may add ifAbsent: true, to set the key only where it is absent; a computed one, jsonPath or cel or fromNamespace or fromNode or fromOwner or fromRef, may add default: "…", set when its source is missing); got a mapping`,
			`rules.yaml:7: rules[0].annotations.c: value must be a string; quote it: "2001-12-14"`}},
		{"reserved marker keys", head + "    pods.admission.kube-annotator.io/kube-annotator: x\n    admission.kube-annotator.io/x: y\n" +
			"  removeAnnotations: [Deployments.Apps.admission.kube-annotator.io/x]\n  removeLabels: [pods.admission.kube-annotator.io/x]\n", []string{
			`rules.yaml:5: rules[0].annotations.pods.admission.kube-annotator.io/kube-annotator: reserved annotation key: kube-annotator's admission policies record in *.admission.kube-annotator.io/* annotations the keys they set`,
			`rules.yaml:7: rules[0].removeAnnotations[0]: reserved annotation key: kube-annotator's admission policies record in *.admission.kube-annotator.io/* annotations the keys they set`}},
		{"unknown top-level field", "kind: Rules\nrules: []\n",
			[]string{`rules.yaml:1: kind: unknown field; known fields are version, rules, tenants`}},
		{"unknown top-level field with suggestion", "rule: []\n", []string{
			`rules.yaml:1: rule: unknown field (did you mean "rules"?); known fields are version, rules, tenants`,
			`rules.yaml:1: rules: required field is missing`}},
		{"unknown rule field with suggestion", "rules:\n- name: a\n  resource: [pods]\n  annotations: {a: b}\n", []string{
			`rules.yaml:2: rules[0].resources: required field is missing`,
			`rules.yaml:3: rules[0].resource: unknown field (did you mean "resources"?); known fields are name, resources, namespaces, excludeNamespaces, namespaceSelector, selector, names, when, mode, allowOptOut, locked, podTemplates, ownerObject, annotations, labels, removeAnnotations, removeLabels, copy`}},
		{"duplicate rule names", "rules:\n" + rule("a") + rule("b") + rule("a") + rule("a"), []string{
			`rules.yaml:4: rules[2].name: duplicate name "a"; rules[0] already uses it`,
			`rules.yaml:5: rules[3].name: duplicate name "a"; rules[0] already uses it`}},
		{"uppercase name", "rules:\n- name: Web\n  resources: [pods]\n  annotations: {a: b}\n",
			[]string{`rules.yaml:2: rules[0].name: invalid name "Web": …a lowercase RFC 1123 label must consist of`}},
		{"name not a string", "rules:\n- name: 1\n  resources: [pods]\n  annotations: {a: b}\n",
			[]string{`rules.yaml:2: rules[0].name: must be a string, got a number (1)`}},
		{"missing rule fields", "rules:\n- {}\n", []string{
			`rules.yaml:2: rules[0].name: required field is missing`,
			`rules.yaml:2: rules[0].resources: required field is missing`,
			`rules.yaml:2: rules[0]: sets nothing: give annotations, labels, removeAnnotations, removeLabels or copy`}},
		{"rule not a mapping", "rules: [x, null]\n", []string{
			`rules.yaml:1: rules[0]: must be a mapping with name, resources and what to set, got "x"`,
			`rules.yaml:1: rules[1]: must be a mapping with name, resources and what to set, got null`}},
		{"empty resources", "rules:\n- name: a\n  resources: []\n  annotations: {a: b}\n",
			[]string{`rules.yaml:3: rules[0].resources: must name at least one resource`}},
		{"resources not a list", "rules:\n- name: a\n  resources: pods\n  annotations: {a: b}\n",
			[]string{`rules.yaml:3: rules[0].resources: must be a list of resource names, got "pods"`}},
		{"bad resources", "rules:\n- name: a\n  resources: [pods, a b, apps/deployments, pods, \"\", 1]\n  annotations: {a: b}\n", []string{
			`rules.yaml:3: rules[0].resources[1]: invalid resource "a b": name one resource as kubectl does, e.g. deployments, deploy or frigates.ship.nwiizo.dev`,
			`rules.yaml:3: rules[0].resources[2]: invalid resource "apps/deployments": name one resource as kubectl does, e.g. deployments, deploy or frigates.ship.nwiizo.dev`,
			`rules.yaml:3: rules[0].resources[3]: duplicate resource "pods"`,
			`rules.yaml:3: rules[0].resources[4]: must not be empty`,
			`rules.yaml:3: rules[0].resources[5]: must be a string, got a number (1)`}},
		{"empty annotations", "rules:\n- name: a\n  resources: [pods]\n  annotations: {}\n",
			[]string{`rules.yaml:4: rules[0].annotations: must set at least one annotation`}},
		{"annotations not a mapping", "rules:\n- name: a\n  resources: [pods]\n  annotations: [a]\n",
			[]string{`rules.yaml:4: rules[0].annotations: must be a mapping of annotation keys to string values, got a list`}},
		{"invalid annotation keys", head + "    a b: x\n    -x: x\n    example.com/: x\n    1: x\n", []string{
			`rules.yaml:5: rules[0].annotations.a b: invalid annotation key: …must consist of alphanumeric characters`,
			`rules.yaml:6: rules[0].annotations.-x: invalid annotation key: …must start and end with an alphanumeric character`,
			`rules.yaml:7: rules[0].annotations.example.com/: invalid annotation key: name part must be non-empty`,
			`rules.yaml:7: rules[0].annotations.example.com/: invalid annotation key: …must consist of alphanumeric characters`,
			`rules.yaml:8: rules[0].annotations: keys must be strings, got a number (1)`}},
		{"duplicate keys", "rules: []\nrules: []\n", []string{`rules.yaml:2: rules: duplicate key`}},
		{"duplicate annotation key", head + "    a: x\n    a: y\n", []string{`rules.yaml:6: rules[0].annotations.a: duplicate key`}},
		{"merge key", head + "    <<: {a: b}\n", []string{`rules.yaml:5: rules[0].annotations: keys must be strings, got a merge (<<)`}},
		{"top-level list", "- rules: []\n", []string{`rules.yaml:1: expected a mapping with a "rules" list, got a list`}},
		{"top-level string", "rules\n", []string{`rules.yaml:1: expected a mapping with a "rules" list, got "rules"`}},
		{"rules a mapping", "rules: {a: b}\n", []string{`rules.yaml:1: rules: must be a list of rules, got a mapping`}},
		{"rules null", "version: v1\nrules:\n", []string{`rules.yaml:2: rules: must be a list of rules, got null`}},
		{"rules missing", "version: v1\n", []string{`rules.yaml:1: rules: required field is missing`}},
		{"version v2", "version: v2\nrules: []\n", []string{`rules.yaml:1: version: unsupported version "v2"; this build reads "v1"`}},
		{"version a number", "version: 1\nrules: []\n", []string{`rules.yaml:1: version: must be a string, got a number (1)`}},
		{"empty file", "", []string{`rules.yaml: file is empty; expected a top-level "rules" list`}},
		{"whitespace only", "  \n\n   \n", []string{`rules.yaml: file is empty; expected a top-level "rules" list`}},
		{"bad selection and actions", `rules:
- name: a
  resources: [pods]
  selector: "app in (web"
  namespaceSelector: ""
  names: ["[a-"]
  namespaces: []
  labels: {team: "not valid!", Bad Key: x}
  annotations: {x: {jsonPath: "{.spec"}, y: {path: z}}
  removeAnnotations: [x, x]
  removeLabels: {a: b}
`, []string{
			`rules.yaml:4: rules[0].selector: invalid label selector "app in (web": …`,
			`rules.yaml:5: rules[0].namespaceSelector: must not be empty; leave the field out to select everything`,
			`rules.yaml:6: rules[0].names[0]: invalid glob "[a-": syntax error in pattern`,
			`rules.yaml:7: rules[0].namespaces: must not be empty; leave the field out to select everything`,
			`rules.yaml:8: rules[0].labels.team: invalid label value "not valid!": …`,
			`rules.yaml:8: rules[0].labels.Bad Key: invalid label key: …`,
			`rules.yaml:9: rules[0].annotations.x.jsonPath: invalid JSONPath template "{.spec": …`,
			`rules.yaml:9: rules[0].annotations.y: value must be a string, {value: "…"}, the same, or {jsonPath: '{.path.to.field}'} to read it from the object, or {cel: "…"} to compute it with a CEL expression, or {fromNamespace: {label: KEY}} to read a label (or annotation) of its namespace, or {fromNode: {label: KEY}} to read a label (or annotation) of a Pod's Node, or {fromOwner: {label: KEY}} to read a label (or annotation) of its controller owner, or {fromRef: {resource: RESOURCE, field: PATH, label: KEY}} to read a label (or annotation) of an object it refers to (any mapping may add ifAbsent: true, to set the key only where it is absent; a computed one, jsonPath or cel or fromNamespace or fromNode or fromOwner or fromRef, may add default: "…", set when its source is missing); got a mapping`,
			`rules.yaml:10: rules[0].removeAnnotations[1]: duplicate key "x"`,
			`rules.yaml:11: rules[0].removeLabels: must be a list of label keys, got a mapping`,
		}},
		{"JSONPath that reads what every write changes", head + "    a: {jsonPath: '{.metadata}'}\n    b: {jsonPath: '{.metadata.annotations}'}\n    c: {jsonPath: '{@}'}\n    d: {jsonPath: '{..name}'}\n    e: {jsonPath: '{.metadata.resourceVersion}'}\n    f: {jsonPath: 'x{$.metadata.labels}'}\n    ok: {jsonPath: '{.metadata.labels.team}-{.metadata.annotations.x}'}\n", []string{
			`rules.yaml:5: rules[0].annotations.a.jsonPath: JSONPath template "{.metadata}" reads .metadata, which every write changes…`,
			`rules.yaml:6: rules[0].annotations.b.jsonPath: JSONPath template "{.metadata.annotations}" reads .metadata.annotations…`,
			`rules.yaml:7: rules[0].annotations.c.jsonPath: JSONPath template "{@}" reads the whole object…`,
			`rules.yaml:8: rules[0].annotations.d.jsonPath: JSONPath template "{..name}" reads ..name…`,
			`rules.yaml:9: rules[0].annotations.e.jsonPath: JSONPath template "{.metadata.resourceVersion}" reads .metadata.resourceVersion…`,
			`rules.yaml:10: rules[0].annotations.f.jsonPath: JSONPath template "x{$.metadata.labels}" reads .metadata.labels…`,
		}},
		{"fromNamespace misused", head + "    a: {jsonPath: '{.spec.x}', fromNamespace: {label: team}}\n    b: {fromNamespace: {}}\n    c: {fromNamespace: {label: team, annotation: team}}\n    d: {fromNamespace: {label: 'bad key'}}\n    e: {fromNamespace: team}\n    f: {fromNamespace: {lable: team}}\n    ok: {fromNamespace: {annotation: example.com/cost}}\n  removeAnnotations: [ok]\n", []string{
			`rules.yaml:2: rules[0].removeAnnotations: "ok" is both set and removed by the rule`,
			`rules.yaml:5: rules[0].annotations.a: gives both jsonPath and fromNamespace; a value is read one way`,
			`rules.yaml:6: rules[0].annotations.b.fromNamespace: must name the namespace's key to read: {label: KEY} or {annotation: KEY}`,
			`rules.yaml:7: rules[0].annotations.c.fromNamespace: gives both label and annotation; read one key of the namespace`,
			`rules.yaml:8: rules[0].annotations.d.fromNamespace.label: invalid label key: …`,
			`rules.yaml:9: rules[0].annotations.e.fromNamespace: must be {label: KEY} or {annotation: KEY}, got "team"`,
			`rules.yaml:10: rules[0].annotations.f.fromNamespace.lable: unknown field (did you mean "label"?); known fields are label, annotation`,
			`rules.yaml:10: rules[0].annotations.f.fromNamespace: must name the namespace's key to read: {label: KEY} or {annotation: KEY}`,
		}},
		{"set and removed by one rule", head + "    a: x\n  removeAnnotations: [a]\n", []string{
			`rules.yaml:2: rules[0].removeAnnotations: "a" is both set and removed by the rule`}},
		{"whitespace with tabs", "\t\n  \n\t\n", []string{`rules.yaml: file is empty; expected a top-level "rules" list`}},
		{"invalid key reported on the key's line", head + "    \"a b\":\n      x\n", []string{
			`rules.yaml:5: rules[0].annotations.a b: invalid annotation key: …must consist of alphanumeric characters`}},
		{"comment only", "# nothing yet\n", []string{`rules.yaml: file is empty; expected a top-level "rules" list`}},
		{"syntax error", "rules: [\n", []string{`rules.yaml:1: invalid YAML: did not find expected node content`}},
		{"unknown anchor", head + "    a: *nope\n", []string{`rules.yaml: invalid YAML: unknown anchor 'nope' referenced`}},
		{"two documents", "rules: []\n---\nrules: []\n", []string{`rules.yaml:2: more than one YAML document; a rules file is one document`}},
		{"syntax error in second document", "rules: []\n---\n[\n", []string{`rules.yaml:3: invalid YAML: did not find expected node content`}},
		{"NUL byte", "rules: []\n\x00", []string{`rules.yaml: file contains a NUL byte; a rules file is YAML text`}},
		{"UTF-16LE with a byte order mark", "\xff\xfer\x00u\x00", []string{`rules.yaml: file is UTF-16 text; save it as UTF-8`}},
		{"UTF-16BE without one", "\x00r\x00u", []string{`rules.yaml: file is UTF-16 text; save it as UTF-8`}},
		{"file larger than MaxFileSize", "rules: []\n#" + strings.Repeat("x", rulefile.MaxFileSize-10) + "\n",
			[]string{fmt.Sprintf("rules.yaml: file is larger than %d bytes", rulefile.MaxFileSize)}},
		{"annotations one byte over 256 KiB", head + "    a: " + strings.Repeat("x", 256<<10) + "\n",
			[]string{`rules.yaml:5: rules[0].annotations: annotations total 262145 bytes, more than the API server accepts (262144)`}},
		{"annotations over 256 KiB through an alias", head + "    a: &v " + big + "\n    b: *v\n",
			[]string{`rules.yaml:5: rules[0].annotations: annotations total 262146 bytes, more than the API server accepts (262144)`}},
		{"many errors sorted by line", "kind: x\nrules:\n- name: A\n  resources: []\n  annotations: {a: 1}\n- {}\n- name: b\n  resources: [pods]\n  annotations: {b: yes, c: True}\n", []string{
			`rules.yaml:1: kind: unknown field; known fields are version, rules, tenants`,
			`rules.yaml:3: rules[0].name: invalid name "A": …RFC 1123`,
			`rules.yaml:4: rules[0].resources: must name at least one resource`,
			`rules.yaml:5: rules[0].annotations.a: value must be a string; quote it: "1"`,
			`rules.yaml:6: rules[1].name: required field is missing`,
			`rules.yaml:6: rules[1].resources: required field is missing`,
			`rules.yaml:6: rules[1]: sets nothing: give annotations, labels, removeAnnotations, removeLabels or copy`,
			`rules.yaml:9: rules[2].annotations.c: value must be a string; quote it: "True"`}},
		{"missing fields sort before later lines", "rules:\n- name: a\n  resources: [a b]\n", []string{
			`rules.yaml:2: rules[0]: sets nothing: give annotations, labels, removeAnnotations, removeLabels or copy`,
			`rules.yaml:3: rules[0].resources[0]: invalid resource "a b": …kubectl`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte(tc.in))
			if f != nil {
				t.Errorf("Parse returned a File with an error: %+v", f)
			}
			checkLines(t, err, tc.want)
		})
	}
}

// bomb returns YAML that defines levels anchors, each a list of ten aliases
// of the previous one: expanded, the last would hold 10^levels strings. Each
// anchor is written as format(i, list), joined by sep.
func bomb(levels int, format func(i int, list string) string, sep string) string {
	defs := make([]string, levels)
	for i := range defs {
		item := `"lol"`
		if i > 0 {
			item = fmt.Sprintf("*l%d", i-1)
		}
		defs[i] = format(i, fmt.Sprintf("&l%d [%s]", i, strings.TrimSuffix(strings.Repeat(item+",", 10), ",")))
	}
	return strings.Join(defs, sep)
}

func TestParseAliasBomb(t *testing.T) {
	const levels = 12
	tests := []struct {
		name string
		in   string
		want string // the message of every error
	}{
		{"in annotation values",
			head + bomb(levels, func(i int, list string) string { return fmt.Sprintf("    k%d: %s", i, list) }, "\n") + "\n    last: *l11\n",
			"value must be a string, got a list"},
		{"in a resources list",
			"rules:\n- name: a\n  annotations: {a: b}\n  resources: [" + bomb(levels, func(_ int, list string) string { return list }, ", ") + ", *l11]\n",
			"must be a string, got a list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				err   error
				alloc uint64
			}
			done := make(chan result, 1)
			go func() {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, err := rules.Parse("rules.yaml", []byte(tc.in))
				runtime.ReadMemStats(&after)
				done <- result{err, after.TotalAlloc - before.TotalAlloc}
			}()
			var res result
			select {
			case res = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Parse did not return within 10s: aliases are being expanded")
			}
			if res.alloc > 32<<20 {
				t.Errorf("Parse allocated %d bytes", res.alloc)
			}
			err := res.err
			var rerr *rulefile.Error
			if !errors.As(err, &rerr) {
				t.Fatalf("error = %v, want a *rulefile.Error", err)
			}
			if len(rerr.Fields) != levels+1 {
				t.Errorf("got %d errors, want %d:\n%v", len(rerr.Fields), levels+1, err)
			}
			for _, fe := range rerr.Fields {
				if fe.Message != tc.want {
					t.Errorf("%s: %s, want %q", fe.Field, fe.Message, tc.want)
				}
			}
		})
	}
}

func TestParse(t *testing.T) {
	pods := func(name string, annotations map[string]string) rulefile.Rule {
		return rulefile.Rule{Name: name, Resources: []string{"pods"}, Annotations: rulefile.Metadata{Values: annotations}}
	}
	tests := []struct {
		name string
		in   string
		want *rulefile.File
	}{
		{"minimal", "rules:\n- name: web\n  resources: [pods]\n  annotations: {team: web}\n",
			&rulefile.File{Version: "v1", Rules: []rulefile.Rule{pods("web", map[string]string{"team": "web"})}}},
		{"with version", "version: v1\nrules:\n" + rule("a"),
			&rulefile.File{Version: "v1", Rules: []rulefile.Rule{pods("a", map[string]string{"a": "b"})}}},
		{"no rules", "rules: []\n", &rulefile.File{Version: "v1", Rules: []rulefile.Rule{}}},
		{"document markers", "---\nrules: []\n...\n", &rulefile.File{Version: "v1", Rules: []rulefile.Rule{}}},
		{"aliases reused by a second rule",
			"rules:\n- name: a\n  resources: &res [deploy, pods]\n  annotations: &common\n    team: web\n    tier: \"1\"\n" +
				"- name: b\n  resources: *res\n  annotations: *common\n",
			&rulefile.File{Version: "v1", Rules: []rulefile.Rule{
				{Name: "a", Resources: []string{"deploy", "pods"}, Annotations: rulefile.Metadata{Values: map[string]string{"team": "web", "tier": "1"}}},
				{Name: "b", Resources: []string{"deploy", "pods"}, Annotations: rulefile.Metadata{Values: map[string]string{"team": "web", "tier": "1"}}},
			}}},
		{"string values and prefixed keys",
			head + "    example.com/team: web\n    Example.COM/Owner: x\n    empty: \"\"\n    quoted: \"True\"\n    yes-is-a-string-in-yaml-1.2: yes\n    tagged: !!str 1\n",
			&rulefile.File{Version: "v1", Rules: []rulefile.Rule{pods("a", map[string]string{
				"example.com/team": "web", "Example.COM/Owner": "x", "empty": "", "quoted": "True",
				"yes-is-a-string-in-yaml-1.2": "yes", "tagged": "1",
			})}}},
		{"annotations exactly 256 KiB", head + "    a: " + strings.Repeat("x", 256<<10-1) + "\n",
			&rulefile.File{Version: "v1", Rules: []rulefile.Rule{pods("a", map[string]string{"a": strings.Repeat("x", 256<<10-1)})}}},
		{"file exactly MaxFileSize", "rules: []\n#" + strings.Repeat("x", rulefile.MaxFileSize-12) + "\n",
			&rulefile.File{Version: "v1", Rules: []rulefile.Rule{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rules.Parse("rules.yaml", []byte(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got.Version != tc.want.Version || !reflect.DeepEqual(got.Rules, tc.want.Rules) {
				t.Errorf("Parse =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestShippedRules(t *testing.T) {
	f, err := rules.Load("../../rules.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := &rulefile.File{Version: "v1", Rules: []rulefile.Rule{
		{Name: "frigates", Resources: []string{"frigates.ship.nwiizo.dev"}, Annotations: rulefile.Metadata{Values: map[string]string{"sample-controller": "True"}}},
		{Name: "workloads", Resources: []string{"deployments", "replicasets", "pods"}, Annotations: rulefile.Metadata{Values: map[string]string{"sample-controller": "True"}}},
	}}
	if f.Version != want.Version || !reflect.DeepEqual(f.Rules, want.Rules) {
		t.Errorf("Load(rules.yaml) =\n%+v\nwant\n%+v", f, want)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	bad := write("bad.yaml", head+"    sample-controller: True\n")
	large := write("large.yaml", "rules: []\n#"+strings.Repeat("x", 2*rulefile.MaxFileSize)+"\n")

	t.Run("missing file", func(t *testing.T) {
		_, err := rules.Load(filepath.Join(dir, "missing.yaml"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error = %v, want one wrapping fs.ErrNotExist", err)
		}
	})
	t.Run("invalid file", func(t *testing.T) {
		_, err := rules.Load(bad)
		var rerr *rulefile.Error
		if !errors.As(err, &rerr) {
			t.Fatalf("error = %v (%T), want a *rulefile.Error", err, err)
		}
		want := rulefile.Error{File: bad, Fields: []rulefile.FieldError{{
			Line: 5, Field: "rules[0].annotations.sample-controller", Message: `value must be a string; quote it: "True"`,
		}}}
		if !reflect.DeepEqual(*rerr, want) {
			t.Errorf("error = %#v, want %#v", *rerr, want)
		}
	})
	t.Run("file larger than MaxFileSize", func(t *testing.T) {
		_, err := rules.Load(large)
		want := fmt.Sprintf("%s: file is larger than %d bytes", large, rulefile.MaxFileSize)
		if err == nil || err.Error() != want {
			t.Errorf("error = %v, want %s", err, want)
		}
	})
}
