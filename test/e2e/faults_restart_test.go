package e2e

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// The kube-apiserver process itself stops mid-convergence and, once every
// object still to write has failed and waits for it, starts again on the
// same address with the same certificates, etcd untouched. Unlike
// TestFaultAPIServerOutage's proxy, the server loses its watch cache
// and its watchers and starts over from etcd. The controller survives it,
// converges every object, and writes each about once.
func TestFaultAPIServerRestart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("restarting kube-apiserver reads its command line from /proc")
	}
	// On SIGTERM kube-apiserver stops listening at once, but by default
	// its process then waits for its open connections, the controller's
	// watches among them: half a minute here. With this flag it answers
	// 429 with Retry-After until its in-flight requests are done, then
	// closes every connection within 2 s and exits.
	cp := h.StartControlPlane(t, h.Options{APIServerFlags: map[string]string{"shutdown-send-retry-after": "true"}})
	ns := cp.NewNamespace(t)
	const n = 200
	configMapsOn(t, cp, ns, n)
	p := startRun(t, "--rules", writeFile(t, "rules.yaml", faultRules), "-n", ns, "--kubeconfig", cp.Kubeconfig,
		"--kube-api-qps", "40", "--kube-api-burst", "1")
	waitWrites(t, p, n/5, 30*time.Second)

	listed, _ := annotatedOn(t, cp, ns)
	stopping := time.Now()
	if err := cp.StopAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	stopped := time.Since(stopping)
	// Every write the old server answered has been counted by now.
	atStop := p.Writes(t, "success")
	waitOutageSeen(t, p, 30*time.Second)
	starting := time.Now()
	down := starting.Sub(stopping) - stopped // from its exit to its start
	if err := cp.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	ready := time.Since(starting)
	p.MustRun(t, "while kube-apiserver was down")
	took := waitConvergedOn(t, cp, ns, 30*time.Second)
	p.WaitMetric(t, 10*time.Second, "workqueue_depth", 0)
	// Late retries, if any, would show in the counts within a second: the
	// bound on the writes holds throughout.
	testutil.Consistently(t, time.Second, fmt.Sprintf("at most %d successful writes", n+10), func() bool {
		return p.Writes(t, "success") <= n+10
	})

	// The restarted server counts from zero: only the writes after it.
	served := requestsOn(t, cp)
	patchedAfter := served.Count("PATCH", "configmaps") + served.Count("APPLY", "configmaps")
	writes, failed := p.Writes(t, "success"), p.Writes(t, "error")
	done, total := annotatedOn(t, cp, ns)
	errs := p.ErrorLines(t, "")
	t.Logf("kube-apiserver stopped at %d/%d annotated (%d successful writes when it exited %v after SIGTERM), "+
		"started again %v after its exit and ready %v later; all %d of %d annotated %v after it was ready. "+
		"Writes: %d successful (%d before the stop, %d PATCH served by the restarted server), %d failed; %d error lines",
		listed, n, atStop, stopped.Round(time.Millisecond), down.Round(time.Millisecond), ready.Round(time.Millisecond),
		done, total, took.Round(time.Millisecond), writes, atStop, patchedAfter, failed, errs)
	if listed == 0 || listed >= n {
		t.Errorf("kube-apiserver stopped at %d/%d annotated, not mid-convergence: the scenario did not happen", listed, n)
	}

	if done != n || total != n {
		t.Errorf("%d of %d ConfigMaps annotated at the end, want all %d", done, total, n)
	}
	// A write in flight at the stop may be made twice (the informer had
	// not seen the first when the queue retried), or be committed while
	// the controller counts it failed.
	if writes < n-2 || writes > n+10 {
		t.Errorf("%d successful writes for %d objects; want about one each", writes, n)
	}
	if got := atStop + patchedAfter; got < n-2 || got > n+10 {
		t.Errorf("%d writes before the stop + %d PATCH requests after the restart for %d objects; want about one each", atStop, patchedAfter, n)
	}
	// Failed syncs are logged once per resource and interval, not once
	// per attempt.
	if errs > 20 {
		t.Errorf("%d error lines for %d failed writes; want a few summary lines", errs, failed)
	}
	p.MustRun(t, "before the end of the test")
}
