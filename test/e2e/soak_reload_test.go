package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// The reload soak (part of make test-faults): with the controller's log in
// the rules file's directory, the file is replaced 20 times in a row — a
// change held by --max-changes, an invalid file, and two valid changes
// that apply, five times over — each as soon as the controller has taken
// the last. Each change is loaded once: the log has a bounded number of
// reload lines, no more once the file stops changing, and the objects end
// with exactly what the rules in force want, no key lost on the way.
func TestSoakReloads(t *testing.T) {
	const objects, marked, cycles = 200, 10, 5
	ns := env.NewNamespace(t)
	names := make([]string, objects)
	for i := range names {
		names[i] = fmt.Sprintf("cm-%03d", i)
	}
	configMapsNamed(t, ns, names...)
	rules := func(team, extra string) string {
		return fmt.Sprintf("rules:\n- name: team\n  resources: [configmaps]\n  namespaces: [%s]\n  annotations: {team: %s}\n%s", ns, team, extra)
	}
	inForce := rules("a", "")
	held := rules("b", "") // changes every object: over --max-changes
	invalid := strings.Replace(inForce, "{team: a}", "{team: 1}", 1)
	applied := rules("a", fmt.Sprintf("- name: marked\n  resources: [configmaps]\n  namespaces: [%s]\n  names: ['cm-00*']\n  annotations: {marked: 'yes'}\n", ns))

	dir := t.TempDir()
	path := filepath.Join(dir, "rules.yaml")
	replaceFile(t, path, inForce)
	p := startRunWithLog(t, filepath.Join(dir, "controller.log"), "--rules", path, "--max-changes", fmt.Sprint(2*marked), "-n", ns)
	for _, n := range names {
		env.WaitForAnnotation(t, 30*time.Second, h.ConfigMaps, ns, n, "team", "a")
	}
	reloads := func(result string) float64 {
		return promtext.MetricValue(p.Scrape(t), "kube_annotator_rules_reloads_total", map[string]string{"result": result})
	}
	changes := 0
	step := func(content, what string, done func() bool) {
		t.Helper()
		replaceFile(t, path, content)
		changes++
		waitFor(t, 15*time.Second, fmt.Sprintf("change %d (%s) taken", changes, what), done)
	}
	for range cycles {
		heldBefore := p.Metric(t, "kube_annotator_rules_reloads_held_total")
		step(held, "held", func() bool { return p.Metric(t, "kube_annotator_rules_reloads_held_total") == heldBefore+1 })
		failed := reloads("failure")
		step(invalid, "invalid", func() bool { return reloads("failure") == failed+1 })
		ok := reloads("success")
		step(applied, "applied", func() bool { return reloads("success") == ok+1 })
		env.WaitForAnnotation(t, 15*time.Second, h.ConfigMaps, ns, names[0], "marked", "yes")
		ok = reloads("success")
		step(inForce, "applied back", func() bool { return reloads("success") == ok+1 })
		waitFor(t, 15*time.Second, "marked pruned from "+names[0], func() bool {
			return !hasKey(env.Get(t, h.ConfigMaps, ns, names[0]).GetAnnotations(), "marked")
		})
	}
	lines := func() int { return p.LogLines(t, "Rules ") + p.LogLines(t, "rules reload") }
	during := lines()
	env.Quiet(t, 3*time.Second, "configmaps")
	if after := lines(); after != during {
		t.Errorf("%d more reload lines once the file stopped changing, want none", after-during)
	}
	// A line or two per change: what it was, and for a held one what it
	// withdrew; never one per line logged.
	if during > 3*changes {
		t.Errorf("%d reload lines for %d changes of the file, want at most %d", during, changes, 3*changes)
	}
	t.Logf("%d changes of the file: %d reload lines, %v failed and %v successful reloads, %v held",
		changes, during, reloads("failure"), reloads("success"), p.Metric(t, "kube_annotator_rules_reloads_held_total"))
	for _, n := range names {
		if a := env.Get(t, h.ConfigMaps, ns, n).GetAnnotations(); a["team"] != "a" || a["marked"] != "" {
			t.Errorf("configmap %s: team %q, marked %q; want a, and no marked once its rule is gone", n, a["team"], a["marked"])
		}
	}
}
