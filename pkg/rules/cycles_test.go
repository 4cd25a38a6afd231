package rules_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestSourceCycles checks that values read round a cycle of rules — a key
// written from another object's key that is itself written, through the
// other rules, from the first — are refused at load, naming each step,
// and that reads that settle are not.
func TestSourceCycles(t *testing.T) {
	resources := []source.Resource{rulestest.ConfigMaps, rulestest.Namespaces, rulestest.Pods, rulestest.Deployments}
	for _, tc := range []struct {
		name, rules string
		want        string // "" when the rules load
	}{
		{"two ConfigMap keys read from each other", `rules:
- {name: a, resources: [configmaps], labels: {x: {fromRef: {resource: configmaps, name: other, label: y}}}}
- {name: b, resources: [configmaps], labels: {y: {fromRef: {resource: configmaps, name: third, label: x}}}}
`, `rules.yaml:2: rules[0].labels.x.fromRef: values are read round a cycle, which never settles: rules[0] (a) writes label "x" of configmaps.v1 from label "y" of configmaps.v1, and rules[1] (b) writes label "y" of configmaps.v1 from label "x" of configmaps.v1`},
		{"a copy in the cycle", `rules:
- {name: a, resources: [configmaps], copy: [{fromNamespace: {labels: ["team*"]}}]}
- {name: b, resources: [configmaps], labels: {x: {fromRef: {resource: configmaps, name: other, label: team-a}}}}
- {name: c, resources: [configmaps], labels: {y: {fromRef: {resource: configmaps, name: other, label: x}}}}
`, ""},
		{"a ConfigMap key read from another, once", `rules:
- {name: a, resources: [configmaps], labels: {x: {fromRef: {resource: configmaps, name: other, label: x}}}}
`, ""},
		{"a Namespace's own labels", `rules:
- {name: a, resources: [namespaces], labels: {team: {fromNamespace: {label: team}}}, copy: [{fromNamespace: {labels: ["*"]}}]}
`, ""},
		{"Pods from their namespace, and from their owner", `rules:
- {name: a, resources: [deployments], copy: [{fromNamespace: {labels: ["*"]}}]}
- {name: b, resources: [pods], labels: {team: {fromOwner: {label: team}}}}
`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte(tc.rules))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = rules.Compile("rules.yaml", f, func(name string) (source.Resource, error) {
				for _, r := range resources {
					if r.GVR.Resource == name || r.GVR.Resource+"."+r.GVR.Group == name {
						return r, nil
					}
				}
				return source.Resource{}, fmt.Errorf("unknown resource %q", name)
			})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Compile() = %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Compile() = %v\nwant an error containing %s", err, tc.want)
			}
		})
	}
}
