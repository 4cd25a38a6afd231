package e2e

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// agreeComputedRules use a when condition, cel values, defaults and a key
// set only where absent, on the ConfigMaps of whatever namespace -n names.
const agreeComputedRules = `rules:
- name: web
  resources: [configmaps]
  when: "object.?data[?'tier'].orValue('') == 'web'"
  labels: {web: "true"}
- name: computed
  resources: [configmaps]
  annotations:
    example.com/id: {cel: "object.metadata.name + ':' + object.?data[?'k'].orValue('none')"}
    example.com/k: {cel: "object.data.k", default: nokey}
    example.com/owner: {jsonPath: '{.data.owner}', default: unknown}
  labels:
    psa: {value: baseline, ifAbsent: true}
`

// TestDiffOnceRunAgreeComputed seeds two namespaces alike with ConfigMaps
// in every state that the rules' when condition, cel values, defaults and
// ifAbsent keys tell apart — a condition that holds, stops holding or never
// did; a value computed, its source gone (the default) or back; a key
// present before, added by the controller, or added and then changed by
// someone (theirs since) — and checks that `diff` predicts for both what
// `once` then changes in the one and `run` in the other: exactly the
// objects and keys listed, and nothing else.
func TestDiffOnceRunAgreeComputed(t *testing.T) {
	rulesFile := writeFile(t, "rules.yaml", agreeComputedRules)
	viaOnce, viaRun := env.NewNamespace(t), env.NewNamespace(t)
	predictions := map[string]map[string]predicted{}
	for _, ns := range []string{viaOnce, viaRun} {
		seedAgreeComputed(t, ns, rulesFile)
		predictions[ns] = diffPredictions(t, rulesFile, ns)
	}
	wantListed := []string{"plain", "source-back", "source-gone", "stopped", "web"}
	for ns, p := range predictions {
		if got := slices.Sorted(maps.Keys(p)); !slices.Equal(got, wantListed) {
			t.Fatalf("diff -n %s lists %v, want %v", ns, got, wantListed)
		}
	}
	if a, b := mustMarshal(t, predictions[viaOnce]), mustMarshal(t, predictions[viaRun]); a != b {
		t.Fatalf("diff predicts differently for two namespaces seeded alike:\n%s\nand\n%s", a, b)
	}

	onceBefore := listConfigMaps(t, viaOnce)
	if stdout, stderr, code := runCLI(t, "once", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", viaOnce); code != 0 {
		t.Fatalf("once: exit %d\n%s%s", code, stdout, stderr)
	}
	checkAsPredicted(t, onceBefore, listConfigMaps(t, viaOnce), predictions[viaOnce])

	runBefore := listConfigMaps(t, viaRun)
	stopRun := startAgreeRun(t, "--rules", rulesFile, "-n", viaRun)
	waitPredicted(t, viaRun, runBefore, predictions[viaRun])
	env.Quiet(t, 3*time.Second, "configmaps")
	runAfter := listConfigMaps(t, viaRun)
	stopRun()
	checkAsPredicted(t, runBefore, runAfter, predictions[viaRun])

	for _, ns := range []string{viaOnce, viaRun} {
		if p := diffPredictions(t, rulesFile, ns); len(p) != 0 {
			t.Errorf("diff -n %s after convergence lists %v, want nothing", ns, slices.Sorted(maps.Keys(p)))
		}
	}
}

// seedAgreeComputed creates the scenario's ConfigMaps in ns: some
// converged by `once` with rulesFile, then changed by someone else; some
// created afterwards.
func seedAgreeComputed(t *testing.T, ns, rulesFile string) {
	t.Helper()
	cm := func(name string, data, labels map[string]string) {
		o := h.Object("v1", "ConfigMap", ns, name)
		o.SetLabels(labels)
		d := map[string]any{}
		for k, v := range data {
			d[k] = v
		}
		o.Object["data"] = d
		env.Create(t, h.ConfigMaps, ns, o)
	}
	cm("converged", map[string]string{"k": "v"}, nil)
	cm("stopped", map[string]string{"tier": "web"}, nil)
	cm("source-gone", map[string]string{"k": "v", "owner": "ann"}, nil)
	cm("source-back", nil, nil)
	cm("taken", nil, nil)
	if stdout, stderr, code := runCLI(t, "once", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Fatalf("once: exit %d\n%s%s", code, stdout, stderr)
	}
	if l := env.Get(t, h.ConfigMaps, ns, "stopped").GetLabels(); l["web"] != "true" || l["psa"] != "baseline" {
		t.Fatalf("once did not converge the seed: stopped has labels %v", l)
	}

	// What others did since.
	userSet(t, h.ConfigMaps, ns, "stopped", `{"data":{"tier":"db"}}`)
	userSet(t, h.ConfigMaps, ns, "source-gone", `{"data":{"k":null,"owner":null}}`)
	userSet(t, h.ConfigMaps, ns, "source-back", `{"data":{"k":"w","owner":"bob"}}`)
	userSet(t, h.ConfigMaps, ns, "taken", `{"metadata":{"labels":{"psa":"restricted"}}}`)
	cm("plain", nil, nil)
	cm("web", map[string]string{"tier": "web", "k": "v", "owner": "ann"}, map[string]string{"psa": "privileged"})
	cm("kept", map[string]string{"tier": "db"}, nil)
	userSet(t, h.ConfigMaps, ns, "kept", `{"metadata":{"labels":{"psa":"privileged"},"annotations":`+
		`{"example.com/id":"kept:none","example.com/k":"nokey","example.com/owner":"unknown"}}}`)
}

// diffPredictions runs `diff -o json` of rulesFile in ns and returns what
// it predicts, by object name (without the namespace).
func diffPredictions(t *testing.T, rulesFile, ns string) map[string]predicted {
	t.Helper()
	stdout, stderr, code := runCLI(t, "diff", "-o", "json", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns)
	var list []predicted
	if err := json.Unmarshal([]byte(stdout), &list); (code != 0 && code != 1) || err != nil {
		t.Fatalf("diff -n %s: exit %d, want 0 or 1; %v\n%s%s", ns, code, err, stdout, stderr)
	}
	out := map[string]predicted{}
	for _, p := range list {
		p.Namespace = "" // to compare two namespaces' predictions
		out[p.Name] = p
	}
	return out
}
