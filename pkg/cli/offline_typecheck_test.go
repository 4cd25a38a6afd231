package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// widgetCRD is a CRD of a custom resource whose spec has a typed field,
// a field that keeps unknown fields, and an embedded resource, whose
// metadata the API server types as every object's.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, kind: Widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  spec: {type: object, properties: {image: {type: string}}}
`

// check --offline type-checks CEL as check and run do on a cluster:
// against the schemas of the built-in resources and of the --crd files'
// custom resources, with the same line-numbered error; what a schema
// leaves open stays dyn, and a resource not known offline is not checked.
func TestCheckOfflineTypeCheck(t *testing.T) {
	widgets := writeTemp(t, "widgets.yaml", widgetCRD)
	tests := []struct {
		name      string
		resources string
		in        string // the rule's fields after name and resources
		err       string // the error's line after the file's path; "" for valid
	}{
		{name: "a typo in a Deployment's field", resources: "deployments", in: "  when: object.spec.replicass > 2\n  labels: {a: b}\n",
			err: `:4: rules[0].when: rule "r": CEL condition "object.spec.replicass > 2" does not type-check against the schema of deployments.v1.apps: column 12: undefined field 'replicass'`},
		{name: "a label value that yields an int", resources: "deployments", in: "  labels:\n    n: {cel: object.spec.replicas}\n",
			err: `:5: rules[0].labels.n.cel: rule "r": CEL value "object.spec.replicas" does not type-check against the schema of deployments.v1.apps: must yield a string, but yields a int`},
		{name: "a label value that yields a map", resources: "configmaps", in: "  labels:\n    d: {cel: object.data}\n",
			err: `:5: rules[0].labels.d.cel: rule "r": CEL value "object.data" does not type-check against the schema of configmaps.v1: must yield a string, but yields a map(string, string)`},
		{name: "an operand of the wrong type in a map's value", resources: "configmaps", in: "  when: object.data.size > 2\n  labels: {a: b}\n",
			err: `:4: rules[0].when: rule "r": CEL condition "object.data.size > 2" does not type-check against the schema of configmaps.v1: column 18: found no matching overload for '_>_' applied to '(string, int)'`},
		{name: "a Deployment's fields", resources: "deploy", in: "  when: \"object.spec.replicas > 2 && object.spec.template.spec.containers.exists(c, c.image.startsWith('nginx'))\"\n" +
			"  labels:\n    n: {cel: string(object.spec.replicas), ifInvalid: truncate}\n"},
		{name: "a Pod's fields", resources: "pods", in: "  when: \"object.spec.nodeName != '' && object.metadata.?labels[?'team'].orValue('') == 'a'\"\n" +
			"  annotations:\n    image: {cel: 'object.spec.containers[0].image'}\n"},
		{name: "a Pod's misspelt field", resources: "pods", in: "  annotations:\n    image: {cel: 'object.spec.containers[0].imag'}\n",
			err: `:5: rules[0].annotations.image.cel: rule "r": CEL value "object.spec.containers[0].imag" does not type-check against the schema of pods.v1: column 26: undefined field 'imag'`},
		{name: "an open field of a built-in resource stays dyn", resources: "controllerrevisions", in: "  when: object.data.anything.deep > 2\n  labels: {a: b}\n"},
		{name: "a CRD's fields", resources: "frigates", in: "  when: \"object.spec.foo == 'x' && object.status.conditions.exists(c, c.type == 'Ready')\"\n" +
			"  annotations:\n    n: {cel: object.metadata.name}\n"},
		{name: "a CRD's misspelt field", resources: "frigates", in: "  when: object.spec.fooo == 'x'\n  labels: {a: b}\n",
			err: `:4: rules[0].when: rule "r": CEL condition "object.spec.fooo == 'x'" does not type-check against the schema of frigates.v1beta1.ship.nwiizo.dev: column 12: undefined field 'fooo'`},
		{name: "a CRD's metadata is every object's", resources: "frigates", in: "  when: object.metadata.nme == 'x'\n  labels: {a: b}\n",
			err: `:4: rules[0].when: rule "r": CEL condition "object.metadata.nme == 'x'" does not type-check against the schema of frigates.v1beta1.ship.nwiizo.dev: column 16: undefined field 'nme'`},
		{name: "a CRD's typed field, of the wrong type", resources: "widgets", in: "  when: object.spec.size == 'big'\n  labels: {a: b}\n",
			err: `:4: rules[0].when: rule "r": CEL condition "object.spec.size == 'big'" does not type-check against the schema of widgets.v1.example.com: column 18: found no matching overload for '_==_' applied to '(int, string)'`},
		{name: "a CRD's preserved unknown fields stay dyn", resources: "widgets", in: "  when: object.spec.extra.anything.deep > 2 && object.spec.size > 1\n  labels: {a: b}\n"},
		{name: "a CRD's embedded resource has metadata", resources: "widgets", in: "  when: \"object.spec.template.metadata.name == 'x' && object.spec.template.kind == 'Pod' && object.spec.template.spec.image != ''\"\n  labels: {a: b}\n"},
		{name: "a CRD's embedded resource's metadata is typed", resources: "widgets", in: "  when: object.spec.template.metadata.nme == 'x'\n  labels: {a: b}\n",
			err: `:4: rules[0].when: rule "r": CEL condition "object.spec.template.metadata.nme == 'x'" does not type-check against the schema of widgets.v1.example.com: column 30: undefined field 'nme'`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "rules.yaml", "rules:\n- name: r\n  resources: ["+tc.resources+"]\n"+tc.in)
			stdout, stderr, code := invoke("kube-annotator", "check", "--offline", "--rules", path, "--crd", frigateCRD, "--crd", widgets)
			if tc.err == "" {
				if code != 0 || stdout != path+": valid (1 rule)\n" || stderr != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and the file valid", code, stdout, stderr)
				}
				return
			}
			if code != 1 || !strings.Contains(stderr, path+tc.err) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, stderr, path+tc.err)
			}
		})
	}
}

// admission --offline compiles the rules as check --offline does: CEL
// that does not type-check is refused with the same error.
func TestAdmissionOfflineTypeCheck(t *testing.T) {
	path := writeTemp(t, "rules.yaml", "rules:\n- name: r\n  resources: [deployments]\n  when: object.spec.replicass > 2\n  labels: {a: b}\n")
	want := path + `:4: rules[0].when: rule "r": CEL condition "object.spec.replicass > 2" does not type-check against the schema of deployments.v1.apps: column 12: undefined field 'replicass'`
	_, stderr, code := invoke("kube-annotator", "admission", "--offline", "--rules", path)
	if code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("admission --offline: exit %d, stderr:\n%s\nwant an error with %q", code, stderr, want)
	}
}

// check --offline -o json reports each expression that does not
// type-check as an error at its line, and the file as invalid.
func TestCheckOfflineTypeCheckJSON(t *testing.T) {
	path := writeTemp(t, "rules.yaml", "rules:\n- name: r\n  resources: [deployments]\n  when: object.spec.replicass > 2\n  labels:\n    n: {cel: object.spec.replicas}\n")
	stdout, stderr, code := invoke("kube-annotator", "check", "--offline", "-o", "json", "--rules", path)
	var report struct {
		Valid    bool `json:"valid"`
		Problems []struct {
			Severity, Path, Message string
			Line                    int
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("exit %d, stdout is not a report: %v\n%s%s", code, err, stdout, stderr)
	}
	var got []string
	for _, p := range report.Problems {
		got = append(got, fmt.Sprintf("%s %d %s %v", p.Severity, p.Line, p.Path, strings.Contains(p.Message, "does not type-check against the schema of deployments.v1.apps")))
	}
	want := []string{"error 4 rules[0].when true", "error 6 rules[0].labels.n.cel true"}
	if code != 1 || report.Valid || !slices.Equal(got, want) {
		t.Errorf("exit %d, valid %v, problems %q; want exit 1, invalid, %q", code, report.Valid, got, want)
	}
}
