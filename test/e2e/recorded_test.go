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
// it, as any key the controller set. The value is what the controller's
// cache of the namespace holds when it writes: the test creates a
// ConfigMap only once the followed key team-now shows that the cache has
// seen the namespace's change.
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
    team-now: {fromNamespace: {label: team}}
`, ns))
	startRun(t, "--rules", rulesFile)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "x", "team a recorded", func(_, l map[string]string) bool { return l["team"] == "a" })

	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"b"}}}`)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "x", "the followed team-now at b: the change seen", func(_, l map[string]string) bool { return l["team-now"] == "b" })
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
	for _, name := range []string{"x", "y"} {
		waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, name, "the followed team-now deleted: the removal seen", func(_, l map[string]string) bool { return !hasKey(l, "team-now") })
	}
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

// A recorded value read from a related object keeps what it was when
// first written, while the same value followed changes with its source:
// a Pod records its Node's zone when it is bound (a Pod not yet scheduled
// has none to record) and its namespace's team, and relabelling the Node
// and the namespace moves the followed keys only.
func TestRecordedRelated(t *testing.T) {
	ns := env.NewNamespace(t)
	node := ns + "-n1"
	newNode(t, node, map[string]string{zoneKey: "z1"}, nil)
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"a"}}}`)
	env.Create(t, h.Pods, ns, podOn(t, ns, "bound", node))
	env.Create(t, h.Pods, ns, h.Pod(t, ns, "pending"))
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: zone
  resources: [pods]
  namespaces: [%s]
  labels:
    zone: {fromNode: {label: %[2]s}}
    zone-at-bind: {fromNode: {label: %[2]s}, once: true}
    team: {fromNamespace: {label: team}}
    team-at-create: {fromNamespace: {label: team}, once: true}
`, ns, zoneKey))
	as := grantRBAC(t, rulesFile, ns, "nodes")
	startRun(t, "--rules", rulesFile, "--as", as, "--record-namespace", ns)
	want := func(pod string, labels map[string]string) {
		t.Helper()
		waitLabels(t, h.Pods, ns, pod, labels)
	}
	want("bound", map[string]string{"zone": "z1", "zone-at-bind": "z1", "team": "a", "team-at-create": "a"})
	want("pending", map[string]string{"zone": "", "zone-at-bind": "", "team": "a", "team-at-create": "a"})

	userSet(t, nodes, "", node, fmt.Sprintf(`{"metadata":{"labels":{%q:"z2"}}}`, zoneKey))
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"b"}}}`)
	want("bound", map[string]string{"zone": "z2", "zone-at-bind": "z1", "team": "b", "team-at-create": "a"})

	bindPod(t, ns, "pending", node)
	want("pending", map[string]string{"zone": "z2", "zone-at-bind": "z2", "team": "b", "team-at-create": "a"})

	userSet(t, nodes, "", node, fmt.Sprintf(`{"metadata":{"labels":{%q:"z3"}}}`, zoneKey))
	want("pending", map[string]string{"zone": "z3", "zone-at-bind": "z2"})
	want("bound", map[string]string{"zone": "z3", "zone-at-bind": "z1"})
}

// A recorded key set (copy with once: true) keeps the namespace's labels
// as they were when the Deployment was first seen (Kyverno's
// copy-namespace-labels), while a followed one moves: relabelling and
// unlabelling the namespace changes only the followed keys, and a
// Deployment made after the change records the new labels.
func TestRecordedCopy(t *testing.T) {
	ns := env.NewNamespace(t)
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"rec-team":"a","fol-team":"a"}}}`)
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "web", 0))
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: copy-namespace
  resources: [deployments]
  namespaces: [%s]
  copy:
  - fromNamespace: {labels: ["rec-*"], once: true}
  - fromNamespace: {labels: ["fol-*"]}
`, ns))
	startRun(t, "--rules", rulesFile)
	labelled := func(name string, want map[string]string) {
		t.Helper()
		waitLabels(t, h.Deployments, ns, name, want)
	}
	labelled("web", map[string]string{"rec-team": "a", "fol-team": "a"})
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"rec-team":"b","fol-team":"b","rec-env":"dev"}}}`)
	labelled("web", map[string]string{"rec-team": "a", "fol-team": "b", "rec-env": "dev"})
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "later", 0))
	labelled("later", map[string]string{"rec-team": "b", "fol-team": "b"})
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"rec-team":null,"fol-team":null}}}`)
	labelled("web", map[string]string{"rec-team": "a", "fol-team": ""})
	labelled("later", map[string]string{"rec-team": "b", "fol-team": ""})
}
