package e2e

import (
	"fmt"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// A default that is another value form is read where the value's own
// source is missing, and followed as it changes: a ConfigMap's field,
// else its namespace's label, else a literal. The controller watches the
// namespace for the default alone, and diff computes the same values.
func TestDefaultsFallback(t *testing.T) {
	ns := env.NewNamespace(t)
	configMapsNamed(t, ns, "x")
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: owner
  resources: [configmaps]
  namespaces: [%s]
  labels: {owner: {jsonPath: '{.data.owner}', default: {fromNamespace: {label: team}, default: none}}}
`, ns))
	p := startRun(t, "--rules", rulesFile)
	owner := func(want, what string) {
		t.Helper()
		waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "x", what, func(_, l map[string]string) bool { return l["owner"] == want })
	}
	owner("none", "the literal, as neither source has a value")
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"a"}}}`)
	owner("a", "the namespace's label, once it has one")
	userSet(t, h.ConfigMaps, ns, "x", `{"data":{"owner":"ann"}}`)
	owner("ann", "the field, once it is set")
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"b"}}}`)
	userSet(t, h.ConfigMaps, ns, "x", `{"data":{"owner":null}}`)
	owner("b", "the namespace's label again, as it is now")
	p.Terminate(t)
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff after convergence: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", code, out, stderr)
	}
}
