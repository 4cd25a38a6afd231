package chart

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// For every ci/ values file, the chart's key locks are the
// ValidatingAdmissionPolicies and bindings `kube-annotator admission`
// prints for the rules of rules.inline, each rule's locked rewritten as
// the chart reads it: the release's ServiceAccount first among its users,
// and, for locked: true, the default groups. Names are compared from
// ".lock.", as the chart names them after the release and admission after
// the field manager; of the labels, the rule's.
func TestKeyLocksEqualAdmissionCommand(t *testing.T) {
	const ns = "kube-annotator"
	locks := 0
	for _, c := range ciCases(t, ns) {
		t.Run(c.name, func(t *testing.T) {
			sa := "system:serviceaccount:" + ns + ":" + stringValue(c.values, "ka-kube-annotator", "serviceAccount", "name")
			got := keyLocks(t, objects(t, c.rendered))
			path, ok := lockedRulesFile(t, objects(t, c.rendered), sa)
			if !ok {
				if len(got) != 0 {
					t.Errorf("no inline rule is locked, yet the chart renders %d key lock objects", len(got))
				}
				return
			}
			out := runCLI(t, "admission", "--rules", path, "--field-manager", stringValue(c.values, "kube-annotator", "fieldManager"))
			want := keyLocks(t, objects(t, out))
			if len(want) == 0 {
				t.Fatal("admission prints no key lock for rules marked locked")
			}
			locks += len(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the chart's key locks differ from admission's:\nchart: %s\nadmission: %s", asYAML(t, got), asYAML(t, want))
			}
		})
	}
	if locks == 0 {
		t.Error("no ci/ values file locks a rule")
	}
}

// keyLocks returns the ValidatingAdmissionPolicies and bindings among objs
// that lock a rule's keys (labelled kube-annotator.io/rule), the
// policies first, each as its kind, name from ".lock.", rule label and
// spec, with the policy's name in a binding's spec likewise.
func keyLocks(t *testing.T, objs []*unstructured.Unstructured) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, o := range objs {
		rule, ok := o.GetLabels()["kube-annotator.io/rule"]
		if !ok || (o.GetKind() != "ValidatingAdmissionPolicy" && o.GetKind() != "ValidatingAdmissionPolicyBinding") {
			continue
		}
		spec, _, _ := unstructured.NestedMap(o.Object, "spec")
		if p, ok := spec["policyName"].(string); ok {
			spec["policyName"] = fromLock(t, p)
		}
		out = append(out, map[string]any{"kind": o.GetKind(), "name": fromLock(t, o.GetName()), "rule": rule, "spec": spec})
	}
	// Helm installs by kind: the policies, in rule order, then the bindings.
	slices.SortStableFunc(out, func(a, b map[string]any) int { return strings.Compare(a["kind"].(string), b["kind"].(string)) })
	return out
}

// fromLock is name from ".lock.".
func fromLock(t *testing.T, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(name, ".lock.")
	if !ok {
		t.Errorf("key lock %q: not named <prefix>.lock.<rule>", name)
	}
	return ".lock." + rest
}

// lockedRulesFile writes the rules of the rules ConfigMap among objs as a
// rules file, each locked rule allowing sa first, and reports whether one
// is locked.
func lockedRulesFile(t *testing.T, objs []*unstructured.Unstructured, sa string) (string, bool) {
	t.Helper()
	var file map[string]any
	for _, cm := range byKind(objs, "ConfigMap") {
		if !strings.HasSuffix(cm.GetName(), "-rules") {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		for _, d := range data {
			unmarshal(t, d, &file)
		}
	}
	rules, _ := file["rules"].([]any)
	locked := false
	for _, r := range rules {
		rule := r.(map[string]any)
		switch l := rule["locked"].(type) {
		case bool:
			if l {
				rule["locked"] = map[string]any{"users": []any{sa}, "groups": []any{"system:masters", "kubeadm:cluster-admins"}}
				locked = true
			}
		case map[string]any:
			users, _ := l["users"].([]any)
			l["users"] = append([]any{sa}, slices.DeleteFunc(users, func(u any) bool { return u == sa })...)
			locked = true
		}
	}
	if !locked {
		return "", false
	}
	data, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, true
}
