package rules_test

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestExplainInputs checks that Explain shows a rule's when condition
// with the fields it read, whether it holds or not, and each computed
// value with how it is computed and the fields it read; and that a
// condition the rule's other fields never reach, or a literal, shows none.
func TestExplainInputs(t *testing.T) {
	set := rulestest.Compile(t, `rules:
- name: web
  resources: [configmaps]
  when: "object.?data[?'tier'].orValue('') == 'web'"
  labels: {web: "true"}
- name: named
  resources: [configmaps]
  names: [other]
  when: "has(object.data.tier)"
  labels: {named: "true"}
- name: computed
  resources: [configmaps]
  annotations:
    id: {cel: "object.metadata.name + ':' + object.data.k + namespaceObject.metadata.labels['example.com/env']"}
    owner: {jsonPath: '{.data.owner}', default: unknown}
    team: {fromNamespace: {label: team}, default: none}
  labels: {psa: {value: baseline, ifAbsent: true}}
`, rulestest.ConfigMaps)
	target := set.Targets[rulestest.ConfigMaps.GVR]
	ns := &metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"example.com/env": "prod"}}
	namespaces := source.Namespaces(func(name string) (metav1.Object, bool) { return ns, name == "shop" })
	cm := func(data map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "x", "namespace": "shop"}, "data": data}}
		return u
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want string // the verdicts as JSON
	}{
		{"the condition holds", cm(map[string]any{"tier": "web", "k": "v"}), `[` +
			`{"rule":"web","index":0,"mode":"enforce","selects":true,"when":{"expression":"object.?data[?'tier'].orValue('') == 'web'","holds":true,` +
			`"inputs":[{"field":"object.data.tier","value":"\"web\""}]},"wants":[{"kind":"label","key":"web","value":"true"}]},` +
			`{"rule":"named","index":1,"mode":"enforce","selects":false,"reason":"names [\"other\"] do not match \"x\""},` +
			`{"rule":"computed","index":2,"mode":"enforce","selects":true,"wants":[` +
			`{"kind":"annotation","key":"id","value":"x:vprod","from":"cel \"object.metadata.name + ':' + object.data.k + namespaceObject.metadata.labels['example.com/env']\"",` +
			`"inputs":[{"field":"namespaceObject.metadata.labels['example.com/env']","value":"\"prod\""},{"field":"object.data.k","value":"\"v\""},{"field":"object.metadata.name","value":"\"x\""}]},` +
			`{"kind":"annotation","key":"owner","value":"unknown","defaulted":"owner is not found","from":"jsonPath \"{.data.owner}\""},` +
			`{"kind":"annotation","key":"team","value":"none","defaulted":"fromNamespace: namespace \"shop\" has no label \"team\"","from":"fromNamespace label \"team\"",` +
			`"inputs":[{"field":"namespaceObject.metadata.labels.team","value":null}]},` +
			`{"kind":"label","key":"psa","value":"baseline","ifAbsent":true}]}]`},
		{"the condition does not hold", cm(map[string]any{"tier": "db"}), `` +
			`{"rule":"web","index":0,"mode":"enforce","selects":false,"reason":"when \"object.?data[?'tier'].orValue('') == 'web'\" is false",` +
			`"when":{"expression":"object.?data[?'tier'].orValue('') == 'web'","holds":false,"inputs":[{"field":"object.data.tier","value":"\"db\""}]}}`},
		{"the field is absent", cm(nil), `` +
			`"when":{"expression":"object.?data[?'tier'].orValue('') == 'web'","holds":false,"inputs":[{"field":"object.data.tier","value":null}]}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(target.Explain(tc.obj, namespaces))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("Explain() =\n%s\nwant it to contain\n%s", b, tc.want)
			}
		})
	}
}

// TestExplainInputsOfNamespaces checks that a Namespace's value read from
// its own labels shows the field as the object's.
func TestExplainInputsOfNamespaces(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- {name: team, resources: [namespaces], annotations: {team: {fromNamespace: {label: team}}}}\n",
		rulestest.Namespaces)
	ns := &metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "a"}}
	b, err := json.Marshal(set.Targets[rulestest.Namespaces.GVR].Explain(ns, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := `"wants":[{"kind":"annotation","key":"team","value":"a","from":"fromNamespace label \"team\"",` +
		`"inputs":[{"field":"object.metadata.labels.team","value":"\"a\""}]}]`
	if !strings.Contains(string(b), want) {
		t.Errorf("Explain() =\n%s\nwant it to contain\n%s", b, want)
	}
}
