package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// coverageRules is the rule of the coverage tests: Pods of two namespaces
// get the label team from their namespace's, where absent; in audit mode
// when audit is set.
func coverageRules(checkout, tools string, audit bool) string {
	mode := ""
	if audit {
		mode = "\n  mode: audit"
	}
	return fmt.Sprintf(`rules:
- name: team
  resources: [pods]
  namespaces: [%s, %s]%s
  labels:
    team: {fromNamespace: {label: team}, ifAbsent: true}
`, checkout, tools, mode)
}

// The coverage gauge and the coverage command say, per rule and key, on
// how many objects a key is compliant, pending, or why it cannot be set:
// in checkout {team: payments}, web-1 lacks the label (pending until the
// controller writes it) and api-1 has it; tools has no team, so dns-1
// cannot get one (source-missing, with explain's reason) until tools is
// labelled.
func TestCoverage(t *testing.T) {
	checkout, tools := checkoutAndTools(t)
	rulesFile := writeFile(t, "rules.yaml", coverageRules(checkout, tools, false))
	cli := func(args ...string) (string, int) {
		t.Helper()
		out, stderr, code := runCLIReadOnly(t, append([]string{"coverage", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig}, args...)...)
		if code != 0 && code != 3 || stderr != "" { // no progress line but on a terminal
			t.Fatalf("coverage %v: exit %d, stdout:\n%s\nstderr:\n%s", args, code, out, stderr)
		}
		return out, code
	}

	// Before the controller runs: one of each, not covered (exit 3).
	out, code := cli()
	if row := coverageRow(out, "team"); code != 3 || !slices.Equal(row, []string{"team", "label", "team", "1", "1", "0", "1", "0", "0", "0", "0", "0"}) {
		t.Errorf("coverage: exit %d, row %q, want 3 and compliant 1, pending 1, source-missing 1; output:\n%s", code, row, out)
	}
	out, _ = cli("--state", "source-missing")
	want := fmt.Sprintf(`pods.v1 %s/dns-1: rule team: label team: source-missing: fromNamespace: namespace %q has no label "team"`, tools, tools)
	if strings.TrimSpace(out) != want {
		t.Errorf("coverage --state source-missing:\n%s\nwant\n%s", out, want)
	}
	out, _ = cli("-A", "-o", "json")
	if !strings.Contains(out, fmt.Sprintf(`"namespace": %q`, tools)) || !strings.Contains(out, `"covered": false`) {
		t.Errorf("coverage -A -o json: want the counts by namespace, not covered; got\n%s", out)
	}

	// The controller in audit mode writes nothing: web-1 stays pending.
	replaceFile(t, rulesFile, coverageRules(checkout, tools, true))
	p := startRun(t, "--rules", rulesFile)
	defer p.Terminate(t)
	gauge := func(state string, want float64) {
		t.Helper()
		p.WaitSeries(t, 15*time.Second, "kube_annotator_rule_coverage_objects", map[string]string{"rule": "team", "kind": "label", "key": "team", "state": state}, want)
	}
	gauge("compliant", 1)
	gauge("pending", 1)
	gauge("source-missing", 1)

	// Enforced on reload: web-1 is written, and pending goes to 0.
	replaceFile(t, rulesFile, coverageRules(checkout, tools, false))
	gauge("compliant", 2)
	gauge("pending", 0)
	gauge("source-missing", 1)
	if _, l := metadataOf(t, h.Pods, checkout, "web-1"); l["team"] != "payments" {
		t.Errorf("web-1 label team = %q, want payments", l["team"])
	}

	// tools gets a team: dns-1 is labelled, everything is covered.
	userSet(t, h.Namespaces, "", tools, `{"metadata":{"labels":{"team":"platform"}}}`)
	gauge("compliant", 3)
	gauge("source-missing", 0)
	gauge("pending", 0)
	if out, code := cli(); code != 0 {
		t.Errorf("coverage once covered: exit %d, want 0; output:\n%s", code, out)
	}

	// The rule renamed: its objects count under the new name, and the old
	// name's series go.
	const teamSeries = `kube_annotator_rule_coverage_objects{key="team",kind="label",rule="team",state="compliant"} 3`
	if body := string(p.Scrape(t)); !strings.Contains(body, teamSeries) {
		t.Fatalf("metrics lack %s:\n%s", teamSeries, body)
	}
	replaceFile(t, rulesFile, strings.Replace(coverageRules(checkout, tools, false), "name: team", "name: owner-team", 1))
	p.WaitSeries(t, 15*time.Second, "kube_annotator_rule_coverage_objects", map[string]string{"rule": "owner-team", "state": "compliant"}, 3)
	waitFor(t, 15*time.Second, "no coverage series of rule team", func() bool {
		body, err := p.ReadMetrics()
		for line := range strings.Lines(string(body)) {
			if strings.HasPrefix(line, "kube_annotator_rule_coverage_objects{") && strings.Contains(line, `rule="team"`) {
				return false
			}
		}
		return err == nil
	})
}

// checkoutAndTools makes the namespaces of the coverage case: checkout,
// labelled team=payments, with the Pods web-1 (no team) and api-1
// (team=payments), and tools, unlabelled, with the Pod dns-1.
func checkoutAndTools(t *testing.T) (checkout, tools string) {
	t.Helper()
	checkout, tools = env.NewNamespace(t), env.NewNamespace(t)
	userSet(t, h.Namespaces, "", checkout, `{"metadata":{"labels":{"team":"payments"}}}`)
	env.Create(t, h.Pods, checkout, h.Pod(t, checkout, "web-1"))
	api := h.Pod(t, checkout, "api-1")
	api.SetLabels(map[string]string{"team": "payments"})
	env.Create(t, h.Pods, checkout, api)
	env.Create(t, h.Pods, tools, h.Pod(t, tools, "dns-1"))
	return checkout, tools
}

// coverageRow returns the fields of the row of rule in coverage's table.
func coverageRow(out, rule string) []string {
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == rule {
			return f
		}
	}
	return nil
}
