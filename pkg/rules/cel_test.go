package rules_test

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestParseCEL checks that when conditions and cel values are compiled at
// load, and their errors reported at the line of the expression.
func TestParseCEL(t *testing.T) {
	tests := []struct {
		name string
		in   string // a rule's fields after name and resources: [deployments]
		errs []string
	}{
		{name: "condition and value", in: "  when: object.spec.replicas > 2\n  labels: {id: {cel: \"object.metadata.name\"}}\n"},
		{name: "namespaceObject", in: "  when: namespaceObject.metadata.?labels[?'env'].orValue('') == 'prod'\n  labels: {a: b}\n"},
		{name: "syntax error", in: "  when: 'object.spec.replicas >'\n  labels: {a: b}\n", errs: []string{
			`rules.yaml:4: rules[0].when: invalid CEL condition "object.spec.replicas >": column 23: Syntax error: …`}},
		{name: "condition of another type", in: "  when: '1 + 2'\n  labels: {a: b}\n", errs: []string{
			`rules.yaml:4: rules[0].when: invalid CEL condition "1 + 2": must yield a bool, but yields a int`}},
		{name: "value of another type", in: "  labels:\n    a: {cel: 'object.metadata.name == \"x\"'}\n", errs: []string{
			`rules.yaml:5: rules[0].labels.a.cel: invalid CEL value "object.metadata.name == \"x\"": must yield a string, but yields a bool`}},
		{name: "value that yields a map", in: "  labels:\n    a: {cel: \"{'name': object.metadata.name}\"}\n", errs: []string{
			`rules.yaml:5: rules[0].labels.a.cel: invalid CEL value "{'name': object.metadata.name}": must yield a string, but yields a map(string, dyn)`}},
		{name: "value that yields a list", in: "  annotations:\n    a: {cel: \"object.spec.template.spec.containers.map(c, c.image)\"}\n", errs: []string{
			`rules.yaml:5: rules[0].annotations.a.cel: invalid CEL value "object.spec.template.spec.containers.map(c, c.image)": must yield a string, but yields a list(dyn)`}},
		{name: "unknown variable", in: "  when: oldObject.spec.replicas > 2\n  labels: {a: b}\n", errs: []string{
			`rules.yaml:4: rules[0].when: invalid CEL condition "oldObject.spec.replicas > 2": column 1: undeclared reference to 'oldObject'…`}},
		{name: "empty", in: "  when: ''\n  labels: {a: b}\n", errs: []string{
			`rules.yaml:4: rules[0].when: must be a CEL expression, got an empty string`}},
		{name: "reads every label", in: "  when: object.metadata.labels.size() > 0\n  labels: {a: b}\n", errs: []string{
			`rules.yaml:4: rules[0].when: CEL condition "object.metadata.labels.size() > 0" reads all of object.metadata.labels, which every write changes…`}},
		{name: "reads resourceVersion", in: "  annotations:\n    v: {cel: object.metadata.resourceVersion}\n", errs: []string{
			`rules.yaml:5: rules[0].annotations.v.cel: CEL value "object.metadata.resourceVersion" reads object.metadata.resourceVersion, which every write changes…`}},
		{name: "reads a label it sets", in: "  when: \"!has(object.metadata.labels.psa)\"\n  labels: {psa: baseline}\n", errs: []string{
			`rules.yaml:4: rules[0].when: "!has(object.metadata.labels.psa)" reads label/psa, which the rule sets: …to set it only where it is absent, give it as {value: "…", ifAbsent: true}`}},
		{name: "tests a label it sets with in", in: "  when: \"!('psa' in object.metadata.labels)\"\n  labels: {psa: {value: baseline, ifAbsent: true}}\n", errs: []string{
			`rules.yaml:4: rules[0].when: "!('psa' in object.metadata.labels)" reads label/psa, which the rule sets: …`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: [deployments]\n"+tc.in))
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

// TestWhenReadsAnotherRulesKey checks that a condition on a key another
// rule on the same resource sets is refused, naming that rule.
func TestWhenReadsAnotherRulesKey(t *testing.T) {
	_, err := rules.Parse("rules.yaml", []byte(`rules:
- name: tag
  resources: [deployments]
  annotations: {example.com/tier: web}
- name: big
  resources: [deploy, deployments]
  when: object.metadata.?annotations[?'example.com/tier'].orValue('') == 'web'
  labels: {big: "true"}
`))
	checkLines(t, err, []string{
		`rules.yaml:7: rules[1].when: "object.metadata.?annotations[?'example.com/tier'].orValue('') == 'web'" reads annotation/example.com/tier, which rules[0] (tag) sets: …`})
}

func deployment(name string, replicas int64, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "team-a"},
		"spec":     map[string]any{"replicas": replicas},
	}}
	u.SetLabels(labels)
	return u
}

// TestEvaluateCEL checks what when conditions and cel values want of
// objects, and that a value that cannot be set leaves its key unset.
func TestEvaluateCEL(t *testing.T) {
	set := rulestest.Compile(t, `rules:
- name: big
  resources: [deployments]
  when: object.spec.replicas > 2
  labels: {size: big}
- name: id
  resources: [deployments]
  annotations:
    example.com/id: {cel: "object.metadata.namespace + '/' + object.metadata.name"}
  labels:
    tier: {cel: "object.metadata.?labels[?'app'].orValue('none') + '-tier'"}
    bad: {cel: "object.metadata.name + ' with space'"}
    missing: {cel: "object.spec.template.metadata.name"}
- name: ns
  resources: [deployments]
  when: namespaceObject.metadata.?labels[?'env'].orValue('') == 'prod'
  annotations: {example.com/prod: "true"}
`, rulestest.Deployments)
	target := set.Targets[rulestest.Deployments.GVR]
	if !target.ReadsObjects || !target.NeedsNamespaceLabels {
		t.Fatalf("ReadsObjects = %v, NeedsNamespaceLabels = %v; want both", target.ReadsObjects, target.NeedsNamespaceLabels)
	}
	wantFields := [][]string{{"apiVersion"}, {"kind"}, {"metadata"}, {"spec", "replicas"}, {"spec", "template", "metadata", "name"}}
	if p := target.Projection(); !p.Whole || !reflect.DeepEqual(p.Fields, wantFields) {
		t.Errorf("projection keeps fields %q (whole %v), want %q", p.Fields, p.Whole, wantFields)
	}
	prod := source.Namespaces(func(name string) (metav1.Object, bool) {
		return &metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}}, true
	})
	tests := []struct {
		name        string
		obj         *unstructured.Unstructured
		namespaces  source.Namespaces
		labels      map[string]string
		annotations map[string]string
		problems    int
	}{
		{name: "small", obj: deployment("web", 1, map[string]string{"app": "web"}),
			labels:      map[string]string{"tier": "web-tier"},
			annotations: map[string]string{"example.com/id": "team-a/web"}, problems: 2},
		{name: "big in prod", obj: deployment("web", 3, nil), namespaces: prod,
			labels:      map[string]string{"size": "big", "tier": "none-tier"},
			annotations: map[string]string{"example.com/id": "team-a/web", "example.com/prod": "true"}, problems: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := tc.namespaces
			if ns == nil {
				ns = func(name string) (metav1.Object, bool) { return &metav1.ObjectMeta{Name: name}, true }
			}
			e := target.Evaluate(tc.obj, ns)
			if !equalMaps(e.Desired.Labels, tc.labels) || !equalMaps(e.Desired.Annotations, tc.annotations) {
				t.Errorf("labels %v, annotations %v; want %v, %v", e.Desired.Labels, e.Desired.Annotations, tc.labels, tc.annotations)
			}
			if len(e.Problems) != tc.problems {
				t.Errorf("problems %q, want %d", e.Problems, tc.problems)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCELCostLimit checks that an expression over the API server's
// per-call cost limit fails, leaving the object unselected, rather than
// running on.
func TestCELCostLimit(t *testing.T) {
	set := rulestest.Compile(t, `rules:
- name: costly
  resources: [deployments]
  when: "object.spec.items.all(a, object.spec.items.all(b, object.spec.items.all(c, a + b + c >= 0)))"
  labels: {costly: "yes"}
`, rulestest.Deployments)
	obj := deployment("web", 1, nil)
	items := make([]any, 200)
	for i := range items {
		items[i] = int64(i)
	}
	obj.Object["spec"].(map[string]any)["items"] = items
	verdicts := set.Targets[rulestest.Deployments.GVR].Explain(obj, nil)
	if verdicts[0].Selects || !strings.Contains(verdicts[0].Reason, "cost") {
		t.Errorf("selects = %v, reason %q; want unselected for exceeding the cost limit", verdicts[0].Selects, verdicts[0].Reason)
	}
}
