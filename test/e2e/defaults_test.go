package e2e

import (
	"fmt"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// A computed value's default is set where its source is missing, and
// gives way to the value read once the source has one: a JSONPath field,
// and a label of the namespace. The admission policies set defaults at
// creation (testDefaultsAdmission).
func TestDefaults(t *testing.T) {
	ns := env.NewNamespace(t)
	configMapsNamed(t, ns, "x")
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: owner
  resources: [configmaps]
  namespaces: [%s]
  annotations: {owner: {jsonPath: '{.data.owner}', default: unknown}}
  labels: {team: {fromNamespace: {label: team}, default: none}}
`, ns))
	p := startRun(t, "--rules", rulesFile)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "x", "the defaults set", func(a, l map[string]string) bool {
		return a["owner"] == "unknown" && l["team"] == "none"
	})
	userSet(t, h.ConfigMaps, ns, "x", `{"data":{"owner":"ann"}}`)
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"a"}}}`)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "x", "the values read", func(a, l map[string]string) bool {
		return a["owner"] == "ann" && l["team"] == "a"
	})
	userSet(t, h.ConfigMaps, ns, "x", `{"data":{"owner":null}}`)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "x", "the default again", func(a, _ map[string]string) bool {
		return a["owner"] == "unknown"
	})
	p.Terminate(t)

	t.Run("admission", testDefaultsAdmission)
}

// defaultsAdmissionRules set an annotation and a label read from a
// ConfigMap's data, each with a default, on the ConfigMaps of ns.
func defaultsAdmissionRules(ns string) string {
	return fmt.Sprintf(`rules:
- name: owner
  resources: [configmaps]
  namespaces: [%s]
  names: ['cm-*']
  annotations: {owner: {jsonPath: '{.data.owner}', default: unknown}}
  labels: {tier: {jsonPath: '{.data.tier}', default: none}}
`, ns)
}

// With run --admission-policies, the MutatingAdmissionPolicy of a rule
// with defaults sets them in the create response where the source is
// missing (or holds no valid label value), and the values read where it
// has them; the controller then has nothing to change. Without
// MutatingAdmissionPolicy v1 (1.35), the controller sets the same keys
// right after creation.
func testDefaultsAdmission(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", defaultsAdmissionRules(ns)+probeRule(ns))
	objects := []struct {
		name                string
		data                map[string]any
		wantOwner, wantTier string
	}{
		{"cm-missing", nil, "unknown", "none"},
		{"cm-read", map[string]any{"owner": "ann", "tier": "web"}, "ann", "web"},
		{"cm-invalid", map[string]any{"owner": "bob", "tier": "not valid"}, "bob", "none"},
	}
	degraded := startAdmission(t, ns, rulesFile)
	for _, o := range objects {
		cm := h.Object("v1", "ConfigMap", ns, o.name)
		if o.data != nil {
			cm.Object["data"] = o.data
		}
		got := env.Create(t, h.ConfigMaps, ns, cm)
		checkCreated(t, degraded, got, map[string]string{"owner": o.wantOwner}, map[string]string{"tier": o.wantTier})
		waitMetadata(t, 10*time.Second, h.ConfigMaps, ns, o.name, "owner "+o.wantOwner+", tier "+o.wantTier, func(a, l map[string]string) bool {
			return a["owner"] == o.wantOwner && l["tier"] == o.wantTier
		})
	}
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff after creation: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", code, out, stderr)
	}
}
