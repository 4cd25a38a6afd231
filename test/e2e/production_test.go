package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

var events = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}

// Two replicas with leader election: one writes; when it stops, the other
// takes over within the lease duration.
func TestLeaderElection(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", "rules:\n- name: cms\n  resources: [configmaps]\n  annotations: {elected: \"yes\"}\n")
	const lease = "4s"
	args := []string{"--rules", rulesFile, "-n", ns, "--leader-elect", "--leader-election-namespace", ns,
		"--leader-election-lease-duration", lease, "--leader-election-renew-deadline", "3s", "--leader-election-retry-period", "500ms"}
	a, b := startRun(t, args...), startRun(t, args...)

	var leader, standby *proc.Process
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		la, errA := a.TryMetric("kube_annotator_leader")
		lb, errB := b.TryMetric("kube_annotator_leader")
		if errA != nil || errB != nil {
			return false, nil
		}
		switch {
		case la == 1 && lb == 0:
			leader, standby = a, b
		case lb == 1 && la == 0:
			leader, standby = b, a
		}
		return leader != nil, nil
	})
	if err != nil {
		t.Fatalf("no single leader emerged: %v", err)
	}
	for i := range 5 {
		env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, fmt.Sprintf("cm-%d", i)))
	}
	for i := range 5 {
		env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, ns, fmt.Sprintf("cm-%d", i), "elected", "yes")
	}
	if got := standby.Metric(t, "kube_annotator_writes_total"); got != 0 {
		t.Errorf("the standby replica wrote %v times, want 0", got)
	}
	if got := leader.Metric(t, "kube_annotator_writes_total"); got != 5 {
		t.Errorf("the leader wrote %v times, want 5", got)
	}
	if standby.Ready(t) != 200 {
		t.Errorf("the standby replica is not ready; it should be, to take over")
	}

	stopped := time.Now()
	leader.Terminate(t)
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "after-handover"))
	duration, _ := time.ParseDuration(lease)
	env.WaitForAnnotation(t, duration+5*time.Second-time.Since(stopped), h.ConfigMaps, ns, "after-handover", "elected", "yes")
	t.Logf("the standby annotated a new object %v after the leader got SIGTERM", time.Since(stopped).Round(time.Millisecond))
	if !strings.Contains(leader.Output(t), "Leading") || !strings.Contains(standby.Output(t), "Leading") {
		t.Errorf("both replicas should have led in turn")
	}
}

// The metrics endpoint serves the named series with the expected counts,
// and --events records an Event on each changed object.
func TestMetricsAndEvents(t *testing.T) {
	ns := env.NewNamespace(t)
	seed(t, ns) // 3 of the 4 objects need a patch
	p := startRun(t, "--rules", rulesPath(), "-n", ns, "--events")
	env.WaitForAnnotation(t, 15*time.Second, h.Deployments, ns, "web", sampleKey, sampleValue)
	env.WaitForAnnotation(t, 5*time.Second, h.ReplicaSets, ns, "web-rs", sampleKey, sampleValue)
	env.WaitForAnnotation(t, 5*time.Second, h.Frigates, ns, "frigate-sample", sampleKey, sampleValue)
	p.WaitMetric(t, 5*time.Second, "kube_annotator_informers_synced", 4)

	body := p.Scrape(t)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"kube_annotator_writes_total", map[string]string{"result": "success"}, 3},
		{"kube_annotator_writes_total", map[string]string{"result": "error"}, 0},
		{"kube_annotator_writes_total", map[string]string{"resource": "pods", "result": "success"}, 0},
		{"kube_annotator_writes_total", map[string]string{"resource": "frigates.ship.nwiizo.dev", "result": "success"}, 1},
		{"kube_annotator_syncs_total", map[string]string{"resource": "pods", "result": "error"}, 0},
		{"kube_annotator_informers", nil, 4},
		{"kube_annotator_rules", nil, 2},
		{"kube_annotator_rules_last_reload_successful", nil, 1},
		{"kube_annotator_leader", nil, 1},
	} {
		if got := promtext.MetricValue(body, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Series exist before they count anything, so rate() alerts work.
	for _, series := range []string{
		`kube_annotator_syncs_total{resource="pods",result="error"} 0`,
		`kube_annotator_rules_reloads_total{result="failure"} 0`,
		`workqueue_depth{name="kube-annotator"}`,
		`workqueue_retries_total{name="kube-annotator"} 0`,
	} {
		if !strings.Contains(string(body), series) {
			t.Errorf("metrics lack %s", series)
		}
	}
	if got := promtext.MetricValue(body, "kube_annotator_syncs_total", map[string]string{"resource": "deployments.apps", "result": "success"}); got < 1 {
		t.Errorf("no successful deployment sync counted")
	}
	// The three objects that need a patch went through the queue. The Pod,
	// which carries what the rules want, is decided as its list arrives;
	// the echo of a write is queued only when it arrives before the
	// write's answer (a race), so a fourth add is not counted on.
	if got := promtext.MetricValue(body, "workqueue_adds_total", map[string]string{"name": "kube-annotator"}); got < 3 {
		t.Errorf("workqueue_adds_total = %v, want at least 3", got)
	}

	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := env.Dynamic.Resource(events).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		got := map[string]bool{}
		for _, e := range list.Items {
			reason, _, _ := unstructured.NestedString(e.Object, "reason")
			name, _, _ := unstructured.NestedString(e.Object, "regarding", "name")
			got[reason+"/"+name] = true
		}
		return got["Annotated/web"] && got["Annotated/web-rs"] && got["Annotated/frigate-sample"] && !got["Annotated/web-pod"], nil
	})
	if err != nil {
		t.Errorf("Annotated events for the 3 changed objects (and none for the unchanged Pod): %v", err)
	}
}

// The ServiceAccount of deploy/ is allowed exactly enough: as it, the
// controller converges; without one resource's permission, that resource
// is reported forbidden, retried with backoff rather than in a hot loop,
// and the others still converge.
func TestServiceAccountIdentity(t *testing.T) {
	rendered := applyDeploy(t)
	sa := []string{"--as", "system:serviceaccount:kube-annotator:kube-annotator",
		"--leader-elect", "--leader-election-namespace", "kube-annotator", "--record-namespace", "kube-annotator", "--rules", rulesPath()}

	ns := env.NewNamespace(t)
	seed(t, ns)
	p := startRun(t, append(sa, "-n", ns)...)
	env.WaitForAnnotation(t, 20*time.Second, h.Deployments, ns, "web", sampleKey, sampleValue)
	env.WaitForAnnotation(t, 5*time.Second, h.ReplicaSets, ns, "web-rs", sampleKey, sampleValue)
	env.WaitForAnnotation(t, 5*time.Second, h.Frigates, ns, "frigate-sample", sampleKey, sampleValue)
	p.Terminate(t)

	// Take pods away from the ClusterRole (rule 0 is the core group).
	patch := `[{"op":"test","path":"/rules/0/resources","value":["pods"]},{"op":"remove","path":"/rules/0"}]`
	if _, err := env.Dynamic.Resource(clusterRoles).Patch(t.Context(), "kube-annotator", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("remove pods from the ClusterRole: %v", err)
	}
	t.Cleanup(func() { _, _ = kubectl(t, rendered, "apply", "--server-side", "--force-conflicts", "-f", "-") })
	ns2 := env.NewNamespace(t)
	env.Create(t, h.Pods, ns2, h.Pod(t, ns2, "denied"))
	env.Create(t, h.Deployments, ns2, h.Deployment(t, ns2, "allowed", 0))
	p = startRun(t, append(sa, "-n", ns2)...)
	env.WaitForAnnotation(t, 20*time.Second, h.Deployments, ns2, "allowed", sampleKey, sampleValue)
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		log := p.Output(t)
		return strings.Contains(log, "forbidden") && strings.Contains(log, "pods"), nil
	})
	if err != nil {
		t.Errorf("the controller did not report pods as forbidden:\n%s", p.Output(t))
	}
	// Reported with backoff, not in a hot loop: client-go's reflector
	// waits 0.8 s, doubling up to 30 s, between attempts.
	const window = 10 * time.Second
	logged, served := forbiddenRetries(t, p, window)
	t.Logf("in the %v after pods were first reported forbidden: %d more attempts logged; the API server dispatched %v requests of service accounts (pods attempts and lease renewals)",
		window, logged, served)
	if logged < 1 || logged > 15 {
		t.Errorf("%d attempts to list pods logged in %v, want 1 to 15: retried with backoff", logged, window)
	}
	if served < float64(logged) {
		t.Errorf("the API server dispatched %v requests of service accounts for %d attempts logged: the metric misses them", served, logged)
	}
	if served > 50 {
		t.Errorf("the API server dispatched %v requests of service accounts in %v, want at most 50: no hot loop", served, window)
	}
	p.WaitMetric(t, 5*time.Second, "kube_annotator_informers_synced", 3) // of 4: pods cannot be listed
	forbidden := promtext.MetricValue(p.Scrape(t), "kube_annotator_list_watch_errors_total", map[string]string{"resource": "pods", "reason": "Forbidden"})
	if forbidden < float64(logged) {
		t.Errorf("kube_annotator_list_watch_errors_total{resource=pods,reason=Forbidden} = %v, want at least the %d attempts logged", forbidden, logged)
	}
	if p.Ready(t) == 200 {
		t.Errorf("/readyz is 200 although the pods informer cannot sync")
	}
	if _, ok := env.Get(t, h.Pods, ns2, "denied").GetAnnotations()[sampleKey]; ok {
		t.Errorf("the pod was annotated although pods are forbidden")
	}
}

// forbiddenRetries measures, over window, how often p retried listing the
// pods it may not list: as it logged them (one error line per attempt), and
// as the API server's priority and fairness dispatched requests of service
// accounts, which include p's lease renewals. apiserver_request_total does
// not count requests that authorization rejects; dispatching comes first.
// It fails the test as soon as either passes the bound of a hot loop.
func forbiddenRetries(t *testing.T, p *proc.Process, window time.Duration) (logged int, served float64) {
	t.Helper()
	saRequests := func() float64 {
		v, err := env.ServerMetric(t.Context(), "apiserver_flowcontrol_dispatched_requests_total",
			map[string]string{"flow_schema": "service-accounts"})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	logged0, served0 := p.ErrorLines(t, "pods is forbidden"), saRequests()
	measure := func() {
		logged, served = p.ErrorLines(t, "pods is forbidden")-logged0, saRequests()-served0
	}
	// A hot loop shows as soon as it passes the bounds.
	testutil.Consistently(t, window, "at most 15 attempts to list pods logged and 50 requests of service accounts dispatched", func() bool {
		measure()
		return logged <= 15 && served <= 50
	})
	measure()
	return logged, served
}
