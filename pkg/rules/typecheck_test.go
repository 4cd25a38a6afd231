package rules_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/lint"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
)

// Schemas as the API server publishes them, references resolved, cut
// down to the fields the tests read.
const (
	deploymentSchema = `{"type": "object", "properties": {
		"apiVersion": {"type": "string"}, "kind": {"type": "string"},
		"metadata": {"type": "object", "properties": {
			"name": {"type": "string"}, "generateName": {"type": "string"},
			"labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}},
			"creationTimestamp": {"type": "string", "format": "date-time"}}},
		"spec": {"type": "object", "properties": {
			"replicas": {"type": "integer", "format": "int32"},
			"paused": {"type": "boolean"},
			"strategy": {"type": "object", "properties": {"rollingUpdate": {"type": "object", "properties": {
				"maxSurge": {"x-kubernetes-int-or-string": true},
				"maxUnavailable": {"oneOf": [{"type": "integer"}, {"type": "string"}], "format": "int-or-string"}}}}},
			"template": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
				"containers": {"type": "array", "items": {"type": "object", "properties": {
					"name": {"type": "string"}, "image": {"type": "string"}}}}}}}}}}}}`
	// frigateSchema is a custom resource's structural schema: its
	// metadata lists no fields; its status keeps unknown fields.
	frigateSchema = `{"type": "object", "properties": {
		"apiVersion": {"type": "string"}, "kind": {"type": "string"},
		"metadata": {"type": "object"},
		"spec": {"type": "object", "properties": {"color": {"type": "string"}, "guns": {"type": "integer"}}},
		"status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}`
	// freeformSchema is a custom resource that keeps any spec.
	freeformSchema = `{"type": "object", "x-kubernetes-preserve-unknown-fields": true}`
)

var (
	frigates  = source.Resource{GVR: schema.GroupVersionResource{Group: "ship.example.com", Version: "v1", Resource: "frigates"}, Kind: "Frigate", Namespaced: true}
	freeforms = source.Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "freeforms"}, Kind: "Freeform", Namespaced: true}
)

// TestTypeCheck checks that CEL expressions are type-checked against the
// schema of each resource their rule targets, and left to evaluation
// where none is known.
func TestTypeCheck(t *testing.T) {
	tests := []struct {
		name      string
		resources string // the rule's resources
		in        string // the rule's fields after name and resources
		errs      []string
	}{
		{name: "typo in a field", resources: "deployments", in: "  when: object.spec.replicass > 2\n  labels: {a: b}\n", errs: []string{
			`rules.yaml:4: rules[0].when: rule "r": CEL condition "object.spec.replicass > 2" does not type-check against the schema of deployments.v1.apps: column 12: undefined field 'replicass'`}},
		{name: "operand of the wrong type", resources: "deployments", in: "  when: \"object.spec.replicas > 'two'\"\n  labels: {a: b}\n", errs: []string{
			`rules.yaml:4: rules[0].when: rule "r": CEL condition "object.spec.replicas > 'two'" does not type-check against the schema of deployments.v1.apps: column 22: found no matching overload for '_>_' applied to '(int, string)'`}},
		{name: "value that yields an int", resources: "deployments", in: "  labels:\n    n: {cel: object.spec.replicas}\n", errs: []string{
			`rules.yaml:5: rules[0].labels.n.cel: rule "r": CEL value "object.spec.replicas" does not type-check against the schema of deployments.v1.apps: must yield a string, but yields a int`}},
		{name: "value that yields a list", resources: "deployments", in: "  labels:\n    c: {cel: object.spec.template.spec.containers}\n", errs: []string{
			`rules.yaml:5: rules[0].labels.c.cel: rule "r": CEL value "object.spec.template.spec.containers" does not type-check against the schema of deployments.v1.apps: must yield a string, but yields a list(…`}},
		{name: "value that yields an object", resources: "deployments", in: "  annotations:\n    s: {cel: object.spec.strategy}\n", errs: []string{
			`rules.yaml:5: rules[0].annotations.s.cel: rule "r": CEL value "object.spec.strategy" does not type-check against the schema of deployments.v1.apps: must yield a string, but yields a …`}},
		{name: "typo in a value's field", resources: "deployments", in: "  annotations:\n    image: {cel: \"object.spec.template.spec.containers[0].imag\"}\n", errs: []string{
			`rules.yaml:5: rules[0].annotations.image.cel: rule "r": CEL value "object.spec.template.spec.containers[0].imag" does not type-check against the schema of deployments.v1.apps: column 40: undefined field 'imag'`}},
		{name: "has of a field that does not exist", resources: "deployments", in: "  when: has(object.spec.pausd)\n  labels: {a: b}\n", errs: []string{
			`rules.yaml:4: rules[0].when: rule "r": CEL condition "has(object.spec.pausd)" does not type-check against the schema of deployments.v1.apps: column 4: undefined field 'pausd'`}},
		{name: "has and a nested field", resources: "deployments",
			in: "  when: \"has(object.spec.paused) && !object.spec.paused && object.spec.template.spec.containers.exists(c, c.image.startsWith('nginx'))\"\n  labels: {a: b}\n"},
		{name: "labels, a timestamp as the controller reads it, an int-or-string", resources: "deployments",
			in: "  when: \"object.metadata.creationTimestamp.startsWith('2026') && object.spec.strategy.rollingUpdate.maxSurge == '25%' && object.spec.strategy.rollingUpdate.maxUnavailable == 1\"\n" +
				"  labels:\n    team: {cel: \"object.metadata.?labels.team.orValue('none') + '-' + object.metadata.name\"}\n"},
		{name: "custom resource's spec", resources: "frigates", in: "  when: object.spec.guns > 2 && object.metadata.labels.team == 'a'\n  labels: {a: b}\n"},
		{name: "custom resource's spec, wrong type", resources: "frigates", in: "  when: object.spec.color > 2\n  labels: {a: b}\n", errs: []string{
			`rules.yaml:4: rules[0].when: rule "r": CEL condition "object.spec.color > 2" does not type-check against the schema of frigates.v1.ship.example.com: column 19: found no matching overload for '_>_' applied to '(string, int)'`}},
		{name: "preserved unknown fields stay dyn", resources: "frigates", in: "  when: object.status.anything.deep > 2\n  labels: {a: b}\n"},
		{name: "a resource that keeps any field stays dyn", resources: "freeforms", in: "  when: object.spec.whatever > 2\n  labels: {a: b}\n"},
		{name: "no schema known: dyn", resources: "configmaps", in: "  when: object.data.replicass > 2\n  labels: {a: b}\n"},
		{name: "each resource of the rule", resources: "deployments, frigates", in: "  when: object.spec.guns > 2\n  labels: {a: b}\n", errs: []string{
			`rules.yaml:4: rules[0].when: rule "r": CEL condition "object.spec.guns > 2" does not type-check against the schema of deployments.v1.apps: column 12: undefined field 'guns'`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte(fmt.Sprintf("rules:\n- name: r\n  resources: [%s]\n%s", tc.resources, tc.in)))
			if err != nil {
				t.Fatal(err)
			}
			set := compile(t, f)
			err = rules.TypeCheck("rules.yaml", f, set, schemas(t, map[string]string{
				"Deployment": deploymentSchema, "Frigate": frigateSchema, "Freeform": freeformSchema}))
			if tc.errs != nil {
				checkLines(t, err, tc.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestTypeCheckAsksEachSchemaOnce checks that a resource's schema is asked
// for once however many rules target it, not at all for rules without
// CEL, and that a failure to get it leaves the expressions dyn.
func TestTypeCheckAsksEachSchemaOnce(t *testing.T) {
	f, err := rules.Parse("rules.yaml", []byte(`rules:
- name: a
  resources: [deployments]
  when: object.spec.replicas > 2
  labels: {a: b}
- name: b
  resources: [deployments.v1.apps]
  labels: {n: {cel: object.metadata.name}}
- name: c
  resources: [configmaps]
  labels: {c: d}
`))
	if err != nil {
		t.Fatal(err)
	}
	set := compile(t, f)
	asked := map[string]int{}
	known := schemas(t, map[string]string{"Deployment": deploymentSchema})
	if err := rules.TypeCheck("rules.yaml", f, set, func(r source.Resource) (*spec.Schema, error) {
		asked[r.Kind]++
		return known(r)
	}); err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"Deployment": 1}; fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Errorf("schemas asked for %v, want %v", asked, want)
	}
	typo, err := rules.Parse("rules.yaml", []byte("rules:\n- name: a\n  resources: [deployments]\n  when: object.spec.replicass > 2\n  labels: {a: b}\n"))
	if err != nil {
		t.Fatal(err)
	}
	set = compile(t, typo)
	if err := rules.TypeCheck("rules.yaml", typo, set, known); err == nil {
		t.Error("TypeCheck of a typo with the schema known = nil, want an error")
	}
	err = rules.TypeCheck("rules.yaml", typo, set, func(source.Resource) (*spec.Schema, error) { return nil, errors.New("no answer") })
	if err != nil {
		t.Errorf("TypeCheck with no schema to be had = %v, want nil", err)
	}
}

// compile compiles f against deployments, configmaps, frigates and
// freeforms.
func compile(t *testing.T, f *rulefile.File) *rules.Set {
	t.Helper()
	set, unresolved, err := rules.Compile("rules.yaml", f, func(name string) (source.Resource, error) {
		for _, r := range []source.Resource{rulestest.Deployments, rulestest.ConfigMaps, frigates, freeforms} {
			if r.GVR.Resource == name || source.GVRString(r.GVR) == name {
				return r, nil
			}
		}
		return source.Resource{}, fmt.Errorf("unknown resource %q", name)
	})
	if err != nil || len(unresolved) > 0 {
		t.Fatalf("compile: %v %v", err, unresolved)
	}
	return set
}

// schemas returns a SchemaFunc that knows the schemas, in JSON, by kind.
func schemas(t *testing.T, byKind map[string]string) lint.SchemaFunc {
	t.Helper()
	parsed := map[string]*spec.Schema{}
	for kind, js := range byKind {
		s := new(spec.Schema)
		if err := json.Unmarshal([]byte(js), s); err != nil {
			t.Fatalf("schema of %s: %v", kind, err)
		}
		parsed[kind] = s
	}
	return func(r source.Resource) (*spec.Schema, error) { return parsed[r.Kind], nil }
}

// TestTypeCheckBuiltInSchemas checks expressions against the schemas of
// Deployments and Pods as an API server publishes them, in client-go's
// copy of its OpenAPI v3 documents and in staticdiscovery's, which offline
// commands type-check against: what rules commonly read type-checks, as
// the controller evaluates it, and a typo does not, in both alike.
func TestTypeCheckBuiltInSchemas(t *testing.T) {
	offline, err := staticdiscovery.NewWithOpenAPI(staticdiscovery.BuiltInOpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	for name, docs := range map[string]openapi.Client{"client-go": openapitest.NewEmbeddedFileClient(), "staticdiscovery": offline.OpenAPIV3()} {
		t.Run(name, func(t *testing.T) { testTypeCheckBuiltInSchemas(t, docs) })
	}
}

func testTypeCheckBuiltInSchemas(t *testing.T, docs openapi.Client) {
	pods := source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}
	known := map[string]*spec.Schema{
		"Deployment": builtInSchema(t, docs, "apis/apps/v1", "io.k8s.api.apps.v1.Deployment"),
		"Pod":        builtInSchema(t, docs, "api/v1", "io.k8s.api.core.v1.Pod"),
	}
	for _, tc := range []struct {
		resource source.Resource
		when     string
		err      string
	}{
		{rulestest.Deployments, "object.spec.replicas > 2 && object.spec.template.spec.containers.exists(c, c.image.startsWith('nginx'))", ""},
		{rulestest.Deployments, "object.spec.strategy.?rollingUpdate.maxSurge.orValue(1) == '25%' && object.metadata.creationTimestamp.startsWith('2')", ""},
		{rulestest.Deployments, "object.metadata.?labels[?'team'].orValue('') == 'a' && object.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')", ""},
		{rulestest.Deployments, "object.spec.template.spec.containers.exists(c, c.resources.?limits[?'cpu'].orValue('') == '1')", ""},
		{pods, "object.spec.nodeName != '' && object.spec.volumes.exists(v, has(v.hostPath)) && object.metadata.ownerReferences.exists(o, o.kind == 'ReplicaSet')", ""},
		{pods, "object.spec.securityContext.runAsNonRoot", ""},
		{pods, "object.spec.containers.exists(c, c.securityContext.privilged)", "undefined field 'privilged'"},
		{rulestest.Deployments, "object.spec.replicas > '2'", "found no matching overload for '_>_' applied to '(int, string)'"},
	} {
		t.Run(tc.when, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte(fmt.Sprintf("rules:\n- name: r\n  resources: [%s]\n  when: %q\n  labels: {a: b}\n", tc.resource.GVR.Resource, tc.when)))
			if err != nil {
				t.Fatal(err)
			}
			set, _, err := rules.Compile("rules.yaml", f, func(string) (source.Resource, error) { return tc.resource, nil })
			if err != nil {
				t.Fatal(err)
			}
			err = rules.TypeCheck("rules.yaml", f, set, func(r source.Resource) (*spec.Schema, error) { return known[r.Kind], nil })
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("TypeCheck = %v, want nil", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("TypeCheck = %v, want an error with %q", err, tc.err)
			}
		})
	}
}

// builtInSchema returns the schema named ref in the OpenAPI v3 document
// at path of docs, with its references resolved.
func builtInSchema(t *testing.T, docs openapi.Client, path, ref string) *spec.Schema {
	t.Helper()
	paths, err := docs.Paths()
	if err != nil {
		t.Fatal(err)
	}
	data, err := paths[path].Schema(runtime.ContentTypeJSON)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct{ Schemas map[string]*spec.Schema }
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	const prefix = "#/components/schemas/"
	s, err := resolver.PopulateRefs(func(ref string) (*spec.Schema, bool) {
		s, ok := doc.Components.Schemas[strings.TrimPrefix(ref, prefix)]
		return s, ok
	}, prefix+ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
