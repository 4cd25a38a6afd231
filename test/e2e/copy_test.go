package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// A rule's copy follows the key sets it copies from the namespace: every
// label matching the glob, but those excepted, reaches the ConfigMaps of
// the namespace; a label added to the namespace is added, one removed is
// removed; a key another field manager set on an object keeps its value;
// diff agrees with the controller, and explain says where a value came
// from. A key set computed in CEL gives a Deployment one annotation per
// container, and prunes the one of a container renamed.
func TestCopy(t *testing.T) {
	ns := env.NewNamespace(t)
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"payments","team-region":"eu","other":"x"},"annotations":{"example.com/cost":"c1","note":"n"}}}`)
	configMapsNamed(t, ns, "x", "y")
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "web", 0))
	userSet(t, h.ConfigMaps, ns, "y", `{"metadata":{"labels":{"team-region":"local"}}}`)
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: copy-team
  resources: [configmaps]
  namespaces: [%s]
  copy:
  - fromNamespace: {labels: ["team*"], except: [team-internal]}
  - fromNamespace: {annotations: [example.com/*]}
- name: per-container
  resources: [deployments]
  namespaces: [%s]
  copy:
  - cel: {annotations: "object.spec.template.spec.containers.transformMapEntry(i, c, {'image.example.com/' + c.name: c.image})"}
`, ns, ns))
	startRun(t, "--rules", rulesFile)

	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "x", "team, team-region and example.com/cost copied", func(a, l map[string]string) bool {
		return l["team"] == "payments" && l["team-region"] == "eu" && a["example.com/cost"] == "c1" && !hasKey(l, "other") && !hasKey(a, "note")
	})
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "y", "team copied, team-region kept as another manager set it", func(_, l map[string]string) bool {
		return l["team"] == "payments" && l["team-region"] == "local"
	})
	waitMetadata(t, 15*time.Second, h.Deployments, ns, "web", "one annotation per container", func(a, _ map[string]string) bool {
		return a["image.example.com/app"] == "registry.invalid/app:1"
	})
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff after convergence: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", code, out, stderr)
	}
	out, stderr, code := runCLI(t, "explain", "configmaps/x", "-n", ns, "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	if want := `label "team" of namespace "` + ns + `"`; code != 0 || !strings.Contains(out, want) {
		t.Errorf("explain: exit %d, stdout:\n%s\nstderr:\n%s\nwant it to contain %q", code, out, stderr, want)
	}

	// A label added to the namespace is copied, one excepted is not, and
	// one removed is removed where the controller set it.
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team-cost":"cc-7","team-internal":"1","team-region":null}}}`)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "x", "team-cost added, team-region removed", func(_, l map[string]string) bool {
		return l["team-cost"] == "cc-7" && !hasKey(l, "team-region")
	})
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "y", "team-cost added, team-region kept", func(_, l map[string]string) bool {
		return l["team-cost"] == "cc-7" && l["team-region"] == "local"
	})
	// A container renamed: its annotation goes, the new one's comes.
	userSet(t, h.Deployments, ns, "web", `{"spec":{"template":{"spec":{"containers":[{"name":"api","image":"registry.invalid/api:2"}]}}}}`)
	waitMetadata(t, 15*time.Second, h.Deployments, ns, "web", "the annotation of the container gone pruned, the new one's set", func(a, _ map[string]string) bool {
		return a["image.example.com/api"] == "registry.invalid/api:2" && !hasKey(a, "image.example.com/app")
	})
	for _, name := range []string{"x", "y"} {
		if l := env.Get(t, h.ConfigMaps, ns, name).GetLabels(); hasKey(l, "team-internal") {
			t.Errorf("%s: labels %v carry team-internal, which the rule excepts", name, l)
		}
	}
}
