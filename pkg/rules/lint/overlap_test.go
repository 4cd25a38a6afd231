package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

func TestOverlaps(t *testing.T) {
	const head = "rules:\n- {name: a, resources: [configmaps], %s, annotations: {team: x}}\n- {name: b, resources: [%s], %s, annotations: {team: %s}}\n"
	tests := []struct {
		name, aSel, bRes, bSel, bValue string
		want                           bool
	}{
		{"selectors may overlap", "selector: app=web", "configmaps", "selector: tier=front", "y", true},
		{"same value: no warning", "selector: app=web", "configmaps", "selector: tier=front", "x", false},
		{"a=x against a=y", "selector: app=web", "configmaps", "selector: app=db", "y", false},
		{"a=x against !a", "selector: app=web", "configmaps", "selector: '!app'", "y", false},
		{"a in (x) against a in (x, y)", "selector: app in (web)", "configmaps", "selector: 'app in (web, db)'", "y", true},
		{"disjoint literal namespaces", "namespaces: [one]", "configmaps", "namespaces: [two]", "y", false},
		{"globbed namespaces may overlap", "namespaces: [one]", "configmaps", "namespaces: ['o*']", "y", true},
		{"disjoint literal names", "names: [n1]", "configmaps", "names: [n2]", "y", false},
		{"namespaceSelectors env=a against env=b", "namespaceSelector: env=a", "configmaps", "namespaceSelector: env=b", "y", false},
		{"other resource", "selector: app=web", "secrets", "selector: tier=front", "y", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rulefile.Parse("rules.yaml", []byte(fmt.Sprintf(head, tc.aSel, tc.bRes, tc.bSel, tc.bValue)))
			if err != nil {
				t.Fatal(err)
			}
			got := Overlaps(f)
			if (len(got) > 0) != tc.want {
				t.Fatalf("Overlaps() = %v, want a warning: %v", got, tc.want)
			}
			if tc.want && (got[0].Field != "rules[1]" || !strings.Contains(got[0].Message, `rules a and b may both select configmaps and want different things of annotation "team"`)) {
				t.Errorf("warning %q, want it to name both rules, the resource and the key", got[0])
			}
		})
	}
}
