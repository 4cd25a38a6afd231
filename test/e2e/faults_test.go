package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// The fault suite: the controller under an API server outage, deletions,
// a concurrent writer, throttling and SIGTERM. Each case reports what it
// measured with t.Log.

const faultRules = "rules:\n- name: cms\n  resources: [configmaps]\n  annotations: {fault: \"ok\"}\n"

// configMaps creates n ConfigMaps cm-0 … in ns.
func configMaps(t *testing.T, ns string, n int) {
	t.Helper()
	configMapsOn(t, env, ns, n)
}

// configMapsOn creates n ConfigMaps cm-0 … in ns on the control plane e.
func configMapsOn(t *testing.T, e *h.Env, ns string, n int) {
	t.Helper()
	inParallel(n, func(i int) {
		e.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, fmt.Sprintf("cm-%d", i)))
	})
}

// annotated counts the ConfigMaps in ns carrying fault=ok.
func annotated(t *testing.T, ns string) (done, total int) {
	t.Helper()
	return annotatedOn(t, env, ns)
}

// annotatedOn is annotated on the control plane e.
func annotatedOn(t *testing.T, e *h.Env, ns string) (done, total int) {
	t.Helper()
	list, err := e.Dynamic.Resource(h.ConfigMaps).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.GetName() == "kube-root-ca.crt" {
			continue
		}
		total++
		if cm.GetAnnotations()["fault"] == "ok" {
			done++
		}
	}
	return done, total
}

// waitConverged waits until every ConfigMap in ns is annotated.
func waitConverged(t *testing.T, ns string, timeout time.Duration) time.Duration {
	t.Helper()
	return waitConvergedOn(t, env, ns, timeout)
}

// waitConvergedOn is waitConverged on the control plane e.
func waitConvergedOn(t *testing.T, e *h.Env, ns string, timeout time.Duration) time.Duration {
	t.Helper()
	return waitAllAnnotated(t, timeout, "ConfigMaps", func() (int, int) { return annotatedOn(t, e, ns) })
}

// patches counts the patches (merge patches and server-side applies) the
// API server served on configmaps since before.
func patches(t *testing.T, before h.Requests) int {
	t.Helper()
	after, err := env.APIRequests(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	return d.Count("PATCH", "configmaps") + d.Count("APPLY", "configmaps")
}

// waitWrites waits until p has made at least n successful writes: a moment
// mid-convergence chosen by the controller's progress, not by the clock.
func waitWrites(t *testing.T, p *proc.Process, n int, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, fmt.Sprintf("%d successful writes", n), func() bool {
		body, err := p.ReadMetrics()
		return err == nil && promtext.MetricValue(body, "kube_annotator_writes_total", map[string]string{"result": "success"}) >= float64(n)
	})
}

// waitOutageSeen waits, while the API server does not answer, until p has
// tried every object it still had to write and each waits for the server:
// its queue holds none ready to sync. An outage then lasts as long as the
// controller takes to meet it, not a time chosen by the clock.
func waitOutageSeen(t *testing.T, p *proc.Process, timeout time.Duration) {
	t.Helper()
	p.WaitMetric(t, timeout, "workqueue_depth", 0)
}

// requests reads the suite's apiserver_request_total.
func requests(t *testing.T) h.Requests {
	t.Helper()
	return requestsOn(t, env)
}

// requestsOn reads e's apiserver_request_total.
func requestsOn(t *testing.T, e *h.Env) h.Requests {
	t.Helper()
	r, err := e.APIRequests(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The API server vanishes mid-convergence, until every object still to
// write has failed and waits for it, and comes back.
func TestFaultAPIServerOutage(t *testing.T) {
	ns := env.NewNamespace(t)
	const n = 200
	configMaps(t, ns, n)
	proxy, kubeconfig := env.NewProxy(t)
	before := requests(t)
	p := startRun(t, "--rules", writeFile(t, "rules.yaml", faultRules), "-n", ns, "--kubeconfig", kubeconfig, "--kube-api-qps", "40", "--kube-api-burst", "1")
	waitWrites(t, p, n/5, 30*time.Second)
	proxy.Down()
	down := time.Now()
	done, _ := annotated(t, ns)
	if done == 0 || done >= n {
		t.Errorf("the API server went away at %d/%d converged, not mid-convergence: the scenario did not happen", done, n)
	}
	waitOutageSeen(t, p, 30*time.Second)
	outage := time.Since(down)
	if err := proxy.Up(); err != nil {
		t.Fatal(err)
	}
	took := waitConverged(t, ns, 90*time.Second)
	writes := patches(t, before)
	t.Logf("outage of %v at %d/%d converged; all %d converged %v after the API server came back; %d PATCH requests",
		outage.Round(time.Millisecond), done, n, n, took.Round(time.Millisecond), writes)
	if writes < n || writes > n+10 {
		t.Errorf("%d PATCH requests for %d objects; want about one each", writes, n)
	}
	p.MustRun(t, "during the outage")
}

// Objects deleted while they wait in the queue: no error storm, the queue
// drains.
func TestFaultDeletedWhileQueued(t *testing.T) {
	ns := env.NewNamespace(t)
	const n = 200
	configMaps(t, ns, n)
	p := startRun(t, "--rules", writeFile(t, "rules.yaml", faultRules), "-n", ns, "--kube-api-qps", "20", "--kube-api-burst", "1")
	waitWrites(t, p, n/10, 30*time.Second)
	err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.WaitMetric(t, 20*time.Second, "workqueue_depth", 0)
	errs := p.ErrorLines(t, "")
	body := p.Scrape(t)
	t.Logf("queue drained after deleting %d objects mid-convergence; %d error lines; %v writes, %v syncs with an error",
		n, errs, promtext.MetricValue(body, "kube_annotator_writes_total", map[string]string{"result": "success"}),
		promtext.MetricValue(body, "kube_annotator_syncs_total", map[string]string{"result": "error"}))
	if errs > 5 {
		t.Errorf("%d error lines after deletions; want no error storm", errs)
	}
}

// Another writer changes other annotations and labels of the same objects
// during convergence: every one of its changes survives, and ours land.
func TestFaultConcurrentWriter(t *testing.T) {
	ns := env.NewNamespace(t)
	const n = 200
	configMaps(t, ns, n)
	startRun(t, "--rules", writeFile(t, "rules.yaml", faultRules), "-n", ns, "--kube-api-qps", "60", "--kube-api-burst", "1")
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < n; i += 2 {
				body := fmt.Sprintf(`{"metadata":{"annotations":{"writer/n":"%d"},"labels":{"writer":"%d"}}}`, i, i)
				_, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).Patch(t.Context(), fmt.Sprintf("cm-%d", i),
					types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "writer"})
				if err != nil {
					t.Errorf("writer: %v", err)
				}
			}
		})
	}
	wg.Wait()
	waitConverged(t, ns, 60*time.Second)
	list, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, cm := range list.Items {
		var i int
		if _, err := fmt.Sscanf(cm.GetName(), "cm-%d", &i); err != nil {
			continue
		}
		if cm.GetAnnotations()["writer/n"] != fmt.Sprint(i) || cm.GetLabels()["writer"] != fmt.Sprint(i) {
			lost++
		}
	}
	t.Logf("%d objects, 2 concurrent writers: %d of the writers' changes lost", n, lost)
	if lost != 0 {
		t.Errorf("%d of the other writer's changes were lost", lost)
	}
}

// A client throttled hard still converges, by backing off.
func TestFaultThrottled(t *testing.T) {
	ns := env.NewNamespace(t)
	const n = 50
	configMaps(t, ns, n)
	before := requests(t)
	startRun(t, "--rules", writeFile(t, "rules.yaml", faultRules), "-n", ns, "--kube-api-qps", "5", "--kube-api-burst", "1")
	took := waitConverged(t, ns, 60*time.Second)
	t.Logf("%d objects at 5 requests/s converged in %v with %d PATCH requests", n, took.Round(time.Millisecond), patches(t, before))
}

// SIGTERM mid-convergence: a prompt clean exit; a restart converges the
// rest without writing any object twice.
func TestFaultSIGTERMMidConvergence(t *testing.T) {
	ns := env.NewNamespace(t)
	const n = 200
	configMaps(t, ns, n)
	rulesFile := writeFile(t, "rules.yaml", faultRules)
	before := requests(t)
	p := startRun(t, "--rules", rulesFile, "-n", ns, "--kube-api-qps", "40", "--kube-api-burst", "1")
	waitWrites(t, p, n/5, 30*time.Second)
	stopped := time.Now()
	if err := p.Stop(proc.StopTimeout); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	exit := time.Since(stopped)
	done, _ := annotated(t, ns)
	if done == 0 || done >= n {
		t.Errorf("SIGTERM at %d/%d converged, not mid-convergence: the scenario did not happen", done, n)
	}
	startRun(t, "--rules", rulesFile, "-n", ns)
	waitConverged(t, ns, 60*time.Second)
	writes := patches(t, before)
	t.Logf("SIGTERM at %d/%d converged; exited 0 in %v; after a restart all converged with %d PATCH requests in all", done, n, exit.Round(time.Millisecond), writes)
	if writes != n {
		t.Errorf("%d PATCH requests for %d objects across the restart, want exactly %d", writes, n, n)
	}
}

// The CRD of a ruled resource is deleted while its objects wait in the
// queue: no panic, no error storm, its informer stops, the others go on.
func TestFaultCRDDeletedWhileQueued(t *testing.T) {
	ns := env.NewNamespace(t)
	crd, frigates := h.FrigateCRDInGroup(t, "queued.example.com")
	env.InstallCRD(t, crd)
	const n = 100
	for i := range n {
		env.CreateWhenServed(t, frigates, ns, fmt.Sprintf("{apiVersion: queued.example.com/v1beta1, kind: Frigate, metadata: {name: f-%d}, spec: {foo: bar}}", i))
	}
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "cm-after"))
	p := startRun(t, "--rules", writeFile(t, "rules.yaml", `rules:
- name: fleet
  resources: [frigates.queued.example.com]
  annotations: {fault: "ok"}
- name: cms
  resources: [configmaps]
  annotations: {fault: "ok"}
`), "-n", ns, "--kube-api-qps", "10", "--kube-api-burst", "1")
	p.WaitMetric(t, 15*time.Second, "kube_annotator_informers", 2)
	waitWrites(t, p, 10, 20*time.Second) // some frigates patched, most still queued
	env.DeleteCRD(t, "frigates.queued.example.com")
	p.WaitMetric(t, 20*time.Second, "kube_annotator_informers", 1)
	p.WaitMetric(t, 20*time.Second, "workqueue_depth", 0)
	env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, ns, "cm-after", "fault", "ok")
	errs := p.ErrorLines(t, "")
	t.Logf("CRD deleted with frigates queued: informer stopped, queue drained, %d error lines; configmaps still converge", errs)
	if errs > 5 {
		t.Errorf("%d error lines; want no error storm", errs)
	}
	p.MustRun(t, "before the end of the test")
}
