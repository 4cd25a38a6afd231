package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/reports"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// reportsScaleEnv, set to a number of Pods (a multiple of 100), runs
// TestReportsScale, which measures the reports' cost on the real API
// server for docs/performance.md; unset, it is skipped, as seeding takes
// minutes.
const reportsScaleEnv = "KUBE_ANNOTATOR_REPORTS_SCALE"

// The reports of N Pods in 100 namespaces, 30 of which lack the label the
// rule reads (so 30% of the Pods are source-missing): the API writes and
// the bytes stored to write them all, then the writes once they hold
// what the cluster is, with one Pod added as a barrier.
func TestReportsScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(reportsScaleEnv))
	if n < 100 {
		t.Skipf("set %s to a number of Pods, e.g. 10000, to measure the reports at scale", reportsScaleEnv)
	}
	installReportCRDs(t)
	const namespaces, unlabelled = 100, 30
	var names []string
	for i := range namespaces {
		ns := env.NewNamespace(t)
		if i >= unlabelled {
			userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"a"}}}`)
		}
		names = append(names, ns)
	}
	seedPods(t, names, n/namespaces)
	rulesFile := writeFile(t, "rules.yaml", "rules:\n- name: team\n  resources: [pods]\n  namespaces: [\""+strings.Join(names, "\", \"")+"\"]\n"+
		"  labels:\n    team: {fromNamespace: {label: team}}\n")
	before, err := env.APIRequests(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p := startRun(t, "--rules", rulesFile, "--field-manager", reportsManager, "--reports", "--reports-interval", "1s")
	defer func() { p.Terminate(t) }()
	per := n / namespaces
	var stored int
	waitFor(t, 5*time.Minute, "every report written", func() bool {
		stored = 0
		for i, ns := range names {
			rep, _, ok := reportIn(t, ns)
			want := reports.Summary{Pass: per}
			if i < unlabelled {
				want = reports.Summary{Fail: per}
			}
			if !ok || rep.Summary != want {
				return false
			}
			u, err := env.Dynamic.Resource(reports.ReportResource).Namespace(ns).Get(t.Context(), "kube-annotator", metav1.GetOptions{})
			if err != nil {
				return false
			}
			data, _ := json.Marshal(u.Object)
			stored += len(data)
		}
		return true
	})
	converged := time.Since(start)
	after, err := env.APIRequests(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// A barrier: one more Pod, in a labelled namespace; its report alone is
	// written again.
	pod := h.Pod(t, names[namespaces-1], "barrier")
	pod.SetLabels(map[string]string{"team": "a"})
	env.Create(t, h.Pods, names[namespaces-1], pod)
	waitReport(t, names[namespaces-1], reports.Summary{Pass: per + 1})
	steady, err := env.APIRequests(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	writes, later := after.Sub(before).Writes("reports"), steady.Sub(after).Writes("reports")
	t.Logf("%d Pods in %d namespaces, %d%% source-missing: %d report writes, %d bytes stored (as read back, managedFields included), all written %v after start; then %d write(s) for one Pod added",
		n, namespaces, 100*unlabelled/namespaces, writes, stored, converged.Round(time.Second), later)
	if writes > 2*namespaces || later != 1 {
		t.Errorf("%d writes to write %d reports, then %d for one Pod added; want at most %d, then 1", writes, namespaces, later, 2*namespaces)
	}
}

// seedPods creates perNamespace Pods in each namespace, those of a
// namespace labelled team carrying its label, 8 at a time.
func seedPods(t *testing.T, namespaces []string, perNamespace int) {
	t.Helper()
	type job struct{ ns, name, team string }
	jobs := make(chan job)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for j := range jobs {
				pod := h.Pod(t, j.ns, j.name)
				if j.team != "" {
					pod.SetLabels(map[string]string{"team": j.team})
				}
				if _, err := env.Dynamic.Resource(h.Pods).Namespace(j.ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for _, ns := range namespaces {
		nsObj := env.Get(t, h.Namespaces, "", ns)
		for i := range perNamespace {
			jobs <- job{ns, fmt.Sprintf("pod-%05d", i), nsObj.GetLabels()["team"]}
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("create Pods: %v", err)
	default:
	}
}
