package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// explain --field-manager reports what a controller run with that field
// manager would do: the keys it owns, from the object's managedFields,
// are deleted once no rule wants them; as any other manager, they stay.
func TestExplainFieldManager(t *testing.T) {
	ns := env.NewNamespace(t)
	configMapsNamed(t, ns, "web")
	const manager = "explain-e2e"
	const rule = "rules:\n- name: team\n  resources: [configmaps]\n  namespaces: [%s]\n  annotations: {%s}\n"
	before := writeFile(t, "before.yaml", fmt.Sprintf(rule, ns, "team: web, tier: front"))
	after := writeFile(t, "after.yaml", fmt.Sprintf(rule, ns, "team: web"))
	conn := []string{"--kubeconfig", env.Kubeconfig, "-n", ns, "--record-namespace", ns}
	if stdout, stderr, code := runCLI(t, append([]string{"once", "--rules", before, "--field-manager", manager}, conn...)...); code != 0 {
		t.Fatalf("once --field-manager %s: exit %d\n%s%s", manager, code, stdout, stderr)
	}
	env.WaitForAnnotation(t, 5*time.Second, h.ConfigMaps, ns, "web", "tier", "front")

	for _, tc := range []struct {
		name        string
		args        []string
		wantDeleted bool
	}{
		{"the manager that set tier deletes it", []string{"--field-manager", manager}, true},
		{"the default manager owns nothing here", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"explain", "configmaps/web", "--rules", after, "-o", "json", "--kubeconfig", env.Kubeconfig, "-n", ns}, tc.args...)
			out, stderr, code := runCLI(t, args...)
			var x struct {
				Keys []struct {
					Key    string
					Owners []string
				}
				Changes []struct {
					Key, Rule string
					New       *string
				}
			}
			if err := json.Unmarshal([]byte(out), &x); code != 0 || err != nil {
				t.Fatalf("explain: exit %d, %v; stderr %s", code, err, stderr)
			}
			owned := false
			for _, k := range x.Keys {
				owned = owned || (k.Key == "tier" && len(k.Owners) == 1 && k.Owners[0] == manager)
			}
			if !owned {
				t.Errorf("keys %+v, want tier owned by %s", x.Keys, manager)
			}
			deleted := len(x.Changes) == 1 && x.Changes[0].Key == "tier" && x.Changes[0].New == nil
			if deleted != tc.wantDeleted || (!tc.wantDeleted && len(x.Changes) != 0) {
				t.Errorf("changes %s; want tier deleted: %v", out, tc.wantDeleted)
			}
		})
	}
}
