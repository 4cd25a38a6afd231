package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// Values read from the object's namespace (fromNamespace) follow the
// namespace: a change of its label reaches every selected object within
// 5 s, removing it removes the key, and keys others set stay byte for
// byte as they were. diff computes the same values as the controller.
func TestFromNamespace(t *testing.T) {
	ns1, ns2 := env.NewNamespace(t), env.NewNamespace(t)
	userSet(t, h.Namespaces, "", ns1, `{"metadata":{"labels":{"team":"a"},"annotations":{"example.com/cost":"c1"}}}`)
	userSet(t, h.Namespaces, "", ns2, `{"metadata":{"labels":{"team":"b"}}}`)
	configMapsNamed(t, ns1, "x", "y")
	configMapsNamed(t, ns2, "z")
	const foreign = "  spaced\tvalue ✓ "
	userSet(t, h.ConfigMaps, ns1, "x", fmt.Sprintf(`{"metadata":{"annotations":{"user/note":%q}}}`, foreign))
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: from-ns
  resources: [configmaps]
  namespaces: [%s, %s]
  annotations:
    team: {fromNamespace: {label: team}}
    cost: {fromNamespace: {annotation: example.com/cost}}
  labels:
    team: {fromNamespace: {label: team}}
`, ns1, ns2))

	out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	if code != 1 || !strings.Contains(out, ns1+"/x") || !strings.Contains(out, ns2+"/z") {
		t.Fatalf("diff before run: exit %d, stdout:\n%s\nstderr:\n%s\nwant the three ConfigMaps", code, out, stderr)
	}

	p := startRun(t, "--rules", rulesFile)
	defer p.Terminate(t)
	want := func(ns, name, team, cost string) {
		t.Helper()
		waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, name, fmt.Sprintf("team %q, cost %q", team, cost), func(a, l map[string]string) bool {
			return a["team"] == team && l["team"] == team && a["cost"] == cost &&
				(team != "" || !hasKey(a, "team") && !hasKey(l, "team")) && (cost != "" || !hasKey(a, "cost"))
		})
	}
	want(ns1, "x", "a", "c1")
	want(ns1, "y", "a", "c1")
	want(ns2, "z", "b", "")

	// diff agrees with the controller: nothing left to change. It looks
	// at the test's namespaces only: elsewhere keys other tests' runs set
	// as the same field manager would be pruned under these rules.
	for _, ns := range []string{ns1, ns2} {
		if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
			t.Errorf("diff -n %s after convergence: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", ns, code, out, stderr)
		}
	}

	// A label change reaches every object of the namespace within 5 s.
	userSet(t, h.Namespaces, "", ns1, `{"metadata":{"labels":{"team":"a2"}}}`)
	start := time.Now()
	for _, name := range []string{"x", "y"} {
		waitMetadata(t, 5*time.Second-time.Since(start), h.ConfigMaps, ns1, name, "team a2", func(a, l map[string]string) bool {
			return a["team"] == "a2" && l["team"] == "a2"
		})
	}
	t.Logf("label change propagated to 2 objects in %v", time.Since(start))

	// Removing the label and the annotation removes the keys.
	userSet(t, h.Namespaces, "", ns1, `{"metadata":{"labels":{"team":null},"annotations":{"example.com/cost":null}}}`)
	start = time.Now()
	for _, name := range []string{"x", "y"} {
		waitMetadata(t, 5*time.Second-time.Since(start), h.ConfigMaps, ns1, name, "team and cost removed", func(a, l map[string]string) bool {
			return !hasKey(a, "team") && !hasKey(l, "team") && !hasKey(a, "cost")
		})
	}
	want(ns2, "z", "b", "")
	if got := env.Get(t, h.ConfigMaps, ns1, "x").GetAnnotations()["user/note"]; got != foreign {
		t.Errorf("foreign annotation user/note = %q, want %q byte for byte", got, foreign)
	}
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
