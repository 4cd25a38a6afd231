package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// A reload that would change more objects than --max-changes is held —
// objects keep what the previous rules wanted, and the metrics and /readyz
// say so — until SIGHUP with the file unchanged confirms it.
func TestMaxChangesGuard(t *testing.T) {
	ns := env.NewNamespace(t)
	configMapsNamed(t, ns, "a", "b", "c")
	rulesFor := func(team string) string {
		return "rules:\n- name: team\n  resources: [configmaps]\n  namespaces: [" + ns + "]\n  annotations: {team: " + team + "}\n"
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	replaceFile(t, path, rulesFor("one"))
	p := startRun(t, "--rules", path, "--max-changes", "2")
	defer p.Terminate(t)
	for _, n := range []string{"a", "b", "c"} { // the start is not guarded
		env.WaitForAnnotation(t, 15*time.Second, h.ConfigMaps, ns, n, "team", "one")
	}
	before := env.Get(t, h.ConfigMaps, ns, "a").GetResourceVersion()

	replaceFile(t, path, rulesFor("two"))
	p.WaitMetric(t, 5*time.Second, "kube_annotator_rules_reload_held", 1)
	p.WaitSeries(t, time.Second, "kube_annotator_rules_reload_held_changes", map[string]string{"rule": "team"}, 3)
	if body := p.Readyz(t); !strings.Contains(body, "rules reload held: the new rules would change 3 objects, more than --max-changes 2 (by rule: team: 3)") {
		t.Errorf("/readyz = %q, want it to say the reload is held", body)
	}
	if n := p.LogLines(t, "Rules reload held", "team: 3"); n != 1 {
		t.Errorf("%d log lines say the reload is held with its count per rule, want 1:\n%s", n, p.Output(t))
	}
	env.Quiet(t, time.Second, "configmaps") // fails on any write
	if got := env.Get(t, h.ConfigMaps, ns, "a"); got.GetResourceVersion() != before {
		t.Errorf("configmap a was written while the reload was held: annotations %v", got.GetAnnotations())
	}

	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} {
		env.WaitForAnnotation(t, 5*time.Second, h.ConfigMaps, ns, n, "team", "two")
	}
	p.WaitMetric(t, 5*time.Second, "kube_annotator_rules_reload_held", 0)
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return p.Readyz(t) == "ok\n", nil
	})
	if err != nil {
		t.Errorf("/readyz = %q after confirmation, want \"ok\\n\"", p.Readyz(t))
	}
	if got := p.Metric(t, "kube_annotator_rules_reloads_held_total"); got != 1 {
		t.Errorf("kube_annotator_rules_reloads_held_total = %v, want 1", got)
	}
}
