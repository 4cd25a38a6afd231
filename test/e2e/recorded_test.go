package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// A recorded value (once: true) keeps what it was when first written:
// the ConfigMaps of a namespace get its team, a change of the namespace's
// label reaches the ConfigMaps made after it but not those recorded
// before, nor does its removal delete the recorded keys; explain says a
// key is recorded; and a rules file that no longer records the key prunes
// it, as any key the controller set.
func TestRecordedOnce(t *testing.T) {
	ns := env.NewNamespace(t)
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"a"}}}`)
	configMapsNamed(t, ns, "x")
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: record-team
  resources: [configmaps]
  namespaces: [%s]
  labels:
    team: {fromNamespace: {label: team}, once: true}
`, ns))
	startRun(t, "--rules", rulesFile)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "x", "team a recorded", func(_, l map[string]string) bool { return l["team"] == "a" })

	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"b"}}}`)
	configMapsNamed(t, ns, "y")
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "y", "team b recorded on the ConfigMap made after the change", func(_, l map[string]string) bool { return l["team"] == "b" })
	if l := env.Get(t, h.ConfigMaps, ns, "x").GetLabels(); l["team"] != "a" {
		t.Errorf("x: labels %v, want team a as recorded: a recorded value does not follow its source", l)
	}
	out, stderr, code := runCLI(t, "explain", "configmaps/x", "-n", ns, "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	if code != 0 || !strings.Contains(out, "recorded once") {
		t.Errorf("explain: exit %d, stdout:\n%s\nstderr:\n%s\nwant it to say the key is recorded", code, out, stderr)
	}

	// The source removed: the recorded keys stay; a new ConfigMap gets none.
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":null,"other":"z"}}}`)
	configMapsNamed(t, ns, "z")
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff with the source gone: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0: recorded keys are kept", code, out, stderr)
	}

	// No rule records the key any more: the controller prunes what it set.
	if err := os.WriteFile(rulesFile, fmt.Appendf(nil, "rules:\n- {name: other, resources: [configmaps], namespaces: [%s], labels: {x: y}}\n", ns), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"x", "y"} {
		waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, name, "the recorded team pruned", func(_, l map[string]string) bool { return !hasKey(l, "team") && l["x"] == "y" })
	}
}
