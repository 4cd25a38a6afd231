package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/reports"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// reportsManager is the field manager of the reports tests' controllers,
// so that another test's controller, which deletes the reports of its
// own field manager at start, leaves theirs alone.
const reportsManager = "kube-annotator-reports"

// installReportCRDs installs the OpenReports CRDs of testdata, written
// from the published API, once for the suite.
func installReportCRDs(t *testing.T) {
	t.Helper()
	for _, f := range []string{"testdata/openreports.io_reports.yaml", "testdata/openreports.io_clusterreports.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		obj := h.FromYAML(t, string(data))
		if _, err := env.Dynamic.Resource(h.CRDs).Get(t.Context(), obj.GetName(), metav1.GetOptions{}); err == nil {
			continue
		}
		env.InstallCRD(t, string(data))
	}
}

// reportIn returns the report of namespace, with its resourceVersion, or
// ok false when there is none (or its API is not served yet).
func reportIn(t *testing.T, namespace string) (rep reports.Report, rv string, ok bool) {
	t.Helper()
	return reportNamed(t, namespace, "kube-annotator")
}

// reportNamed is reportIn for the report named name.
func reportNamed(t *testing.T, namespace, name string) (rep reports.Report, rv string, ok bool) {
	t.Helper()
	u, err := env.Dynamic.Resource(reports.ReportResource).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return rep, "", false
	}
	if err != nil {
		t.Fatalf("get report of %s: %v", namespace, err)
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, u.GetResourceVersion(), true
}

// failing lists the results of rep as "name: state: reason", sorted.
func failing(rep reports.Report) []string {
	var out []string
	for _, r := range rep.Results {
		out = append(out, r.Resources[0].Name+": "+r.Properties["state"]+": "+r.Properties["reason"])
	}
	slices.Sort(out)
	return out
}

// waitReport waits until the report of namespace sums up as want and lists
// exactly the results failed, and returns its resourceVersion.
func waitReport(t *testing.T, namespace string, want reports.Summary, failed ...string) string {
	t.Helper()
	var rep reports.Report
	var rv string
	waitFor(t, 30*time.Second, "report of "+namespace, func() bool {
		var ok bool
		rep, rv, ok = reportIn(t, namespace)
		return ok && rep.Summary == want && slices.Equal(failing(rep), failed)
	})
	return rv
}

// With --reports, the controller writes one Report per namespace holding
// the summary and exactly the Pods whose label team is not as the rule
// wants, with the reason; a Pod fixed leaves it; a rule renamed reports
// under its new name; nothing is written once the reports hold what the
// cluster is; without --reports, they are deleted.
func TestReports(t *testing.T) {
	installReportCRDs(t)
	checkout, tools := checkoutAndTools(t)
	barrier := env.NewNamespace(t)
	userSet(t, h.Namespaces, "", barrier, `{"metadata":{"labels":{"team":"platform"}}}`)
	// dns-2 opts out: skipped, not listed.
	dns2 := h.Pod(t, tools, "dns-2")
	dns2.SetAnnotations(map[string]string{"kube-annotator.io/ignore": "true"})
	env.Create(t, h.Pods, tools, dns2)
	// In audit mode, so that web-1 stays pending until a user fixes it.
	rules := fmt.Sprintf(`rules:
- name: team
  resources: [pods]
  namespaces: [%s, %s, %s]
  mode: audit
  labels:
    team: {fromNamespace: {label: team}, ifAbsent: true}
`, checkout, tools, barrier)
	rulesFile := writeFile(t, "rules.yaml", rules)
	args := []string{"--rules", rulesFile, "--field-manager", reportsManager}
	p := startRun(t, append(args, "--reports", "--reports-interval", "1s")...)
	defer func() { p.Terminate(t) }()

	missing := fmt.Sprintf(`source-missing: fromNamespace: namespace %q has no label "team"`, tools)
	waitReport(t, checkout, reports.Summary{Pass: 1, Fail: 1}, "web-1: pending: ")
	toolsRV := waitReport(t, tools, reports.Summary{Fail: 1, Skip: 1}, "dns-1: "+missing)
	rep, _, _ := reportIn(t, tools)
	if r := rep.Results[0]; r.Source != "kube-annotator" || r.Policy != "team" || r.Rule != "team" || r.Result != "fail" ||
		r.Resources[0].Kind != "Pod" || r.Resources[0].Namespace != tools || r.Resources[0].UID == "" || rep.Metadata.Labels[reports.ManagedByLabel] != reports.ManagedBy {
		t.Errorf("report of %s: %+v", tools, rep)
	}

	// A user fixes web-1: it leaves the report, which keeps its summary.
	userSet(t, h.Pods, checkout, "web-1", `{"metadata":{"labels":{"team":"payments"}}}`)
	checkoutRV := waitReport(t, checkout, reports.Summary{Pass: 2})

	// The rule renamed: its results go under the new name at the reload.
	replaceFile(t, rulesFile, strings.Replace(rules, "name: team", "name: owner-team", 1))
	waitFor(t, 30*time.Second, "results under the rule's new name", func() bool {
		rep, _, _ := reportIn(t, tools)
		return len(rep.Results) == 1 && rep.Results[0].Policy == "owner-team"
	})
	toolsRV = waitReport(t, tools, reports.Summary{Fail: 1, Skip: 1}, "dns-1: "+missing)
	checkoutRV = waitReport(t, checkout, reports.Summary{Pass: 2})

	// Steady state: a Pod in another namespace is reported, and the
	// reports of checkout and tools, which did not change, are not
	// written again.
	env.Create(t, h.Pods, barrier, h.Pod(t, barrier, "job-1"))
	waitReport(t, barrier, reports.Summary{Fail: 1}, "job-1: pending: ")
	if _, rv, _ := reportIn(t, checkout); rv != checkoutRV {
		t.Errorf("report of %s written again in steady state: resourceVersion %s, was %s", checkout, rv, checkoutRV)
	}
	if _, rv, _ := reportIn(t, tools); rv != toolsRV {
		t.Errorf("report of %s written again in steady state: resourceVersion %s, was %s", tools, rv, toolsRV)
	}

	// Restarted without --reports: the reports it wrote are deleted.
	p.Terminate(t)
	p = startRun(t, args...)
	waitFor(t, 30*time.Second, "reports deleted", func() bool {
		for _, ns := range []string{checkout, tools, barrier} {
			if _, _, ok := reportIn(t, ns); ok {
				return false
			}
		}
		return true
	})
	// A report is gone from the API server a moment before the process
	// logs its deletion: wait for the log lines, then count them.
	waitLog(t, p, 10*time.Second, "Deleted report", "", 3)
	if n := p.LogLines(t, "Deleted report"); n != 3 {
		t.Errorf("%d reports deleted, want 3:\n%s", n, p.Output(t))
	}
}

// With static shards, each shard writes the reports of its own objects,
// named after it: a namespace's reports sum up to what one replica's
// would, and list each object once.
func TestReportsSharded(t *testing.T) {
	installReportCRDs(t)
	checkout, tools := env.NewNamespace(t), env.NewNamespace(t)
	userSet(t, h.Namespaces, "", checkout, `{"metadata":{"labels":{"team":"payments"}}}`)
	const pods = 12
	var want []string
	for i := range pods {
		name := fmt.Sprintf("pod-%02d", i)
		env.Create(t, h.Pods, tools, h.Pod(t, tools, name))
		want = append(want, name+": "+fmt.Sprintf(`source-missing: fromNamespace: namespace %q has no label "team"`, tools))
		pod := h.Pod(t, checkout, name)
		pod.SetLabels(map[string]string{"team": "payments"})
		env.Create(t, h.Pods, checkout, pod)
	}
	rulesFile := writeFile(t, "rules.yaml", coverageRules(checkout, tools, false))
	for i := range 2 {
		p := startRun(t, "--rules", rulesFile, "--field-manager", reportsManager, "--reports", "--reports-interval", "1s",
			"--shard", strconv.Itoa(i), "--total-shards", "2")
		defer p.Terminate(t)
	}
	sum := func(ns string) (reports.Summary, []string) {
		var s reports.Summary
		var results []string
		for i := range 2 {
			rep, _, _ := reportNamed(t, ns, fmt.Sprintf("kube-annotator-shard-%d", i))
			s.Pass, s.Fail = s.Pass+rep.Summary.Pass, s.Fail+rep.Summary.Fail
			results = append(results, failing(rep)...)
		}
		slices.Sort(results)
		return s, results
	}
	waitFor(t, 30*time.Second, "the shards' reports", func() bool {
		toolsSum, results := sum(tools)
		checkoutSum, none := sum(checkout)
		return toolsSum == reports.Summary{Fail: pods} && slices.Equal(results, want) &&
			checkoutSum == reports.Summary{Pass: pods} && len(none) == 0
	})
	if _, _, ok := reportIn(t, tools); ok {
		t.Errorf("a report named kube-annotator in %s: the shards write theirs alone", tools)
	}
}
