package rbac

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

func TestSensitive(t *testing.T) {
	const path = "rules.yaml"
	file, err := rules.Parse(path, []byte(`rules:
- name: creds
  resources: [cm, secret]
  annotations: {a: "1"}
- name: crds
  resources: [widgets.example.com]
  annotations: {a: "1"}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		resolved map[string]schema.GroupResource
		want     []string
	}{
		{name: "as written", want: []string{
			`warning: rules.yaml: rules[0].resources[1]: rule "creds" targets secret (secrets): the ClusterRole that the rbac command generates grants get, list, watch and patch on all of them, cluster-wide, so the controller's service account can read the data of every Secret in every namespace`,
		}},
		{name: "as resolved", resolved: map[string]schema.GroupResource{
			"cm": {Resource: "configmaps"}, "secret": {Resource: "secrets"},
			"widgets.example.com": {Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
		}, want: []string{
			`warning: rules.yaml: rules[0].resources[1]: rule "creds" targets secret (secrets): `,
			`warning: rules.yaml: rules[1].resources[0]: rule "crds" targets widgets.example.com (customresourcedefinitions.apiextensions.k8s.io): `,
		}},
		{name: "resolved to something else", resolved: map[string]schema.GroupResource{
			"secret": {Group: "example.com", Resource: "secrets"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			for _, p := range Sensitive(file, tc.resolved) {
				lines = append(lines, fmt.Sprintf("warning: %s: %s", path, p)) // as the commands print them
			}
			if len(lines) != len(tc.want) {
				t.Fatalf("%d warnings, want %d:\n%s", len(lines), len(tc.want), strings.Join(lines, "\n"))
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("warning %d:\n%s\nwant it to start with:\n%s", i, lines[i], want)
				}
			}
		})
	}
}
