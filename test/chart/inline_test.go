package chart

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// rules.inline given as text reaches the rules ConfigMap as written,
// comments and blank lines included, so that the controller's errors name
// the lines of the file the user wrote; given as a mapping, it is YAML of
// the same rules. A text that is not a YAML mapping fails the render,
// naming the value.
func TestInlineRulesText(t *testing.T) {
	const text = "# Owned by the platform team.\nversion: v1\n\nrules:\n- name: team   # the team\n  resources: [configmaps]\n  annotations:\n    team: 1\n"
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	rulesData := func(inline any) string {
		t.Helper()
		out, err := Render(ch, map[string]any{"rules": map[string]any{"inline": inline}}, "ka", "kube-annotator", kubeVersion())
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		for _, cm := range byKind(objects(t, out), "ConfigMap") {
			if strings.HasSuffix(cm.GetName(), "-rules") {
				data, _, _ := unstructured.NestedString(cm.Object, "data", "rules.yaml")
				return data
			}
		}
		t.Fatal("no rules ConfigMap rendered")
		return ""
	}
	if got := rulesData(text); got != text {
		t.Errorf("rules.yaml in the ConfigMap:\n%q\nwant the text as written:\n%q", got, text)
	}
	_, err = rules.Parse("rules.yaml", []byte(rulesData(text)))
	if err == nil || !strings.Contains(err.Error(), "rules.yaml:8: rules[0].annotations.team") {
		t.Errorf("the controller's error on the text: %v; want it at line 8, as written", err)
	}
	asMapping := rulesData(map[string]any{"version": "v1", "rules": []any{map[string]any{"name": "team", "resources": []any{"configmaps"},
		"annotations": map[string]any{"team": "a"}}}})
	if f, err := rules.Parse("rules.yaml", []byte(asMapping)); err != nil || len(f.Rules) != 1 || f.Rules[0].Annotations.Values["team"] != "a" {
		t.Errorf("rules.inline as a mapping: %q parses to %+v, %v; want the rule team", asMapping, f, err)
	}
	if _, err := Render(ch, map[string]any{"rules": map[string]any{"inline": "rules: [unclosed"}}, "ka", "kube-annotator", kubeVersion()); err == nil ||
		!strings.Contains(err.Error(), "rules.inline: the text of the rules file is not a YAML mapping") {
		t.Errorf("render with text that is not YAML: %v, want the error naming rules.inline", err)
	}
}
