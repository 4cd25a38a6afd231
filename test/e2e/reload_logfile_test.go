package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

const (
	heldLine    = "Rules reload held"
	invalidLine = "Rules file invalid"
)

// A controller whose log is written into the rules file's directory
// reloads the file once per change of it, not once per line it logs: a
// reload held by --max-changes, then an invalid file, are each logged and
// counted once, the metrics and /readyz say which of the two the file is,
// and the objects keep what the rules in force set.
func TestReloadLogFileInRulesDir(t *testing.T) {
	ns := env.NewNamespace(t)
	names := []string{"a", "b", "c"}
	configMapsNamed(t, ns, names...)
	rulesFor := func(team string) string {
		return "rules:\n- name: team\n  resources: [configmaps]\n  namespaces: [" + ns + "]\n  annotations: {team: " + team + "}\n"
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.yaml")
	replaceFile(t, path, rulesFor("one"))
	p := startRunWithLog(t, filepath.Join(dir, "controller.log"), "--rules", path, "--max-changes", "2", "-n", ns)
	for _, n := range names {
		env.WaitForAnnotation(t, 15*time.Second, h.ConfigMaps, ns, n, "team", "one")
	}

	// Each line logged is an event in the directory: left to reload, the
	// controller would log and count another reload every debounce.
	replaceFile(t, path, rulesFor("two"))
	p.WaitMetric(t, 5*time.Second, "kube_annotator_rules_reload_held", 1)
	waitReadyz(t, p, "rules reload held: the new rules would change 3 objects")
	quietReloads(t, p, "held", 3*time.Second)
	if n := p.LogLines(t, heldLine); n != 1 {
		t.Errorf("%d %q log lines, want 1", n, heldLine)
	}
	if got := p.Metric(t, "kube_annotator_rules_reloads_held_total"); got != 1 {
		t.Errorf("kube_annotator_rules_reloads_held_total = %v with the file held, want 1", got)
	}

	replaceFile(t, path, strings.Replace(rulesFor("three"), "{team: three}", "{team: 3}", 1))
	p.WaitMetric(t, 5*time.Second, "kube_annotator_rules_last_reload_successful", 0)

	quietReloads(t, p, "invalid", 5*time.Second)
	heldAfter, invalidAfter, failuresAfter := p.LogLines(t, heldLine), p.LogLines(t, invalidLine), reloadFailures(t, p)
	if heldAfter != 1 || invalidAfter != 1 {
		t.Errorf("%d %q and %d %q log lines, want 1 each", heldAfter, heldLine, invalidAfter, invalidLine)
	}
	if failuresAfter != 1 {
		t.Errorf("kube_annotator_rules_reloads_total{result=\"failure\"} = %v, want 1", failuresAfter)
	}
	for metric, want := range map[string]float64{
		"kube_annotator_rules_reload_held":            0,
		"kube_annotator_rules_reloads_held_total":     1,
		"kube_annotator_rules_last_reload_successful": 0,
		"kube_annotator_rules":                        1,
	} {
		if got := p.Metric(t, metric); got != want {
			t.Errorf("%s = %v, want %v", metric, got, want)
		}
	}
	waitReadyz(t, p, "rules file invalid, the previous rules are still enforced: ")
	if body := p.Readyz(t); strings.Contains(body, "held") {
		t.Errorf("/readyz = %q with the file invalid, want no reload held", body)
	}
	if code := p.Ready(t); code != 200 {
		t.Errorf("/readyz = %d with the file invalid, want 200: the previous rules are enforced", code)
	}
	for _, n := range names {
		if got := env.Get(t, h.ConfigMaps, ns, n).GetAnnotations()["team"]; got != "one" {
			t.Errorf("configmap %s: team = %q, want \"one\", set by the rules in force", n, got)
		}
	}
}

// quietReloads waits out a window in which nothing may write configmaps,
// and logs how many reload lines and failed reloads the window saw, with
// the file in state.
func quietReloads(t *testing.T, p *proc.Process, state string, window time.Duration) {
	t.Helper()
	held, invalid, failures := p.LogLines(t, heldLine), p.LogLines(t, invalidLine), reloadFailures(t, p)
	env.Quiet(t, window, "configmaps")
	t.Logf("over %v with the file %s: %d more %q lines, %d more %q lines, %v more failed reloads", window, state,
		p.LogLines(t, heldLine)-held, heldLine, p.LogLines(t, invalidLine)-invalid, invalidLine, reloadFailures(t, p)-failures)
}

// reloadFailures reads kube_annotator_rules_reloads_total{result="failure"}.
func reloadFailures(t *testing.T, p *proc.Process) float64 {
	t.Helper()
	return promtext.MetricValue(p.Scrape(t), "kube_annotator_rules_reloads_total", map[string]string{"result": "failure"})
}

// waitReadyz waits until /readyz answers with a line that contains want.
func waitReadyz(t *testing.T, p *proc.Process, want string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(p.Readyz(t), want), nil
	})
	if err != nil {
		t.Fatalf("/readyz = %q, want a line with %q", p.Readyz(t), want)
	}
}
