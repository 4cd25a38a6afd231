package e2e

import (
	"fmt"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// A computed value's default is set where its source is missing, and
// gives way to the value read once the source has one: a JSONPath field,
// and a label of the namespace.
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
	startRun(t, "--rules", rulesFile)
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
}
