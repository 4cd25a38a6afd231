package admission

import (
	"reflect"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// TestManifests checks that the YAML is deterministic and reads back as
// the policies.
func TestManifests(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- {name: a, resources: [configmaps, deployments], selector: app=web, annotations: {a: '1'}}\n"+
		"- {name: b, resources: [namespaces], labels: {b: '2'}}\n", served...)
	var outs [][]byte
	for range 3 {
		policies, _, err := Translate(set, options())
		if err != nil {
			t.Fatal(err)
		}
		out, err := Manifests(policies)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
		docs := splitYAML(out)
		if len(docs) != 2*len(policies) {
			t.Fatalf("%d documents for %d policies", len(docs), len(policies))
		}
		for i, p := range policies {
			var got admissionregistrationv1.MutatingAdmissionPolicy
			var b admissionregistrationv1.MutatingAdmissionPolicyBinding
			if err := yaml.UnmarshalStrict([]byte(docs[2*i]), &got); err != nil {
				t.Fatal(err)
			}
			if err := yaml.UnmarshalStrict([]byte(docs[2*i+1]), &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&got, p.Policy) || !reflect.DeepEqual(&b, p.Binding) {
				t.Errorf("document %d does not read back as the policy and binding of rule %s", 2*i, p.Rule)
			}
		}
	}
	if string(outs[0]) != string(outs[1]) || string(outs[1]) != string(outs[2]) {
		t.Errorf("Manifests() differs from one run to the next")
	}
}

// splitYAML splits a stream of YAML documents at its "---" lines.
func splitYAML(b []byte) []string {
	s := string(b)
	var docs []string
	start := 0
	for i := 0; i+4 <= len(s); i++ {
		if (i == 0 || s[i-1] == '\n') && s[i:i+4] == "---\n" {
			docs = append(docs, s[start:i])
			start = i + 4
		}
	}
	return append(docs, s[start:])
}

// TestTranslateFieldManager rejects field managers that cannot name a
// policy.
func TestTranslateFieldManager(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- {name: a, resources: [configmaps], annotations: {a: '1'}}\n", served...)
	for _, m := range []string{"", "Kube", "a:b", "x.y"} {
		if _, _, err := Translate(set, Options{FieldManager: m}); err == nil {
			t.Errorf("Translate() with field manager %q: no error", m)
		}
	}
}
