package tenants

import (
	"slices"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Compose returns the merged file's set, compiled once, or the admin's
// own when no tenant rule is in force.
func TestCompilerCompose(t *testing.T) {
	resolved := 0
	c := Compiler{Path: "rules.yaml", Resolve: func(string) (source.Resource, error) {
		resolved++
		return rulestest.ConfigMaps, nil
	}}
	admin, err := rules.Parse("rules.yaml", []byte("rules:\n- {name: admin, resources: [configmaps], labels: {managed: \"true\"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	set, unresolved, err := c.Compile(admin)
	if err != nil {
		t.Fatal(err)
	}
	lim := limits()
	lim.Resources = []string{"configmaps"}
	for _, tc := range []struct {
		name      string
		file      string
		want      []string
		compiles  int // resolutions: one per rule compiled
		wantAdmin bool
	}{
		{"a tenant rule in force", "rules:\n- {name: team, resources: [configmaps], labels: {team: a}}\n", []string{"admin", "oil-dev/team"}, 2, false},
		{"none in force", "rules:\n- {name: evil, resources: [configmaps], labels: {evil: a}}\n", []string{"admin"}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resolved = 0
			got, _, err := c.Compose(admin, set, unresolved, []Result{Check(lim, file(tc.file))})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tg := range got.Targets {
				names = tg.RuleNames()
			}
			if !slices.Equal(names, tc.want) || resolved != tc.compiles || (got == set) != tc.wantAdmin {
				t.Errorf("rules %v after %d resolutions, the admin's set %v; want %v after %d, %v", names, resolved, got == set, tc.want, tc.compiles, tc.wantAdmin)
			}
		})
	}
}
