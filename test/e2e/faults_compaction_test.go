package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// configMapsType is how client-go's reflector names the configmaps
// informer's type in its log lines: the controller describes each
// informer by its resource.
const configMapsType = `type="configmaps.v1"`

// configMapsResource is how the controller names the configmaps
// informer's resource in its own log lines.
const configMapsResource = `resource="configmaps.v1"`

// watchRetried is what the controller logs at -v=4 when an informer's
// watch got no answer and is sent again.
const watchRetried = "Watch got no answer; retrying"

// outageChange is what happens to the ConfigMaps cm-from … cm-to while the
// controller is cut off from the API server.
type outageChange struct {
	name     string
	from, to int
	// mutate changes a ConfigMap; nil deletes it.
	mutate func(*unstructured.Unstructured)
	// write tells whether the controller must patch the ConfigMap after.
	write bool
}

// outageChanges are made to cm-0 … cm-39 while the controller is cut off;
// cm-40 … stay as they were.
var outageChanges = []outageChange{
	{name: "deleted", from: 0, to: 9},
	{name: "our annotation removed", from: 10, to: 19, write: true, mutate: func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		delete(a, "fault")
		u.SetAnnotations(a)
	}},
	{name: "our annotation changed", from: 20, to: 29, write: true, mutate: func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		a["fault"] = "stale"
		u.SetAnnotations(a)
	}},
	{name: "data changed", from: 30, to: 39, mutate: func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "changed", "data", "k")
	}},
}

// Watch expiry: while the controller is cut off, its namespace changes and
// etcd compacts the history it would resume its watches from. On return
// the API server answers 410 Gone; the controller relists, writes exactly
// the objects that need it, and misses none.
func TestFaultWatchExpired(t *testing.T) {
	// Without the watch cache, client watches are served from etcd, so
	// that compaction reaches them: the cache would hide it.
	cp := h.StartControlPlane(t, h.Options{APIServerFlags: map[string]string{"watch-cache": "false"}})
	ns := cp.NewNamespace(t)
	const n = 60
	for i := range n {
		cp.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, fmt.Sprintf("cm-%d", i)))
	}
	proxy, kubeconfig := cp.NewProxy(t)
	// At -v=4 the controller logs its informers' watch retries, and
	// client-go's reflector the 410.
	p := startRun(t, "--rules", writeFile(t, "rules.yaml", faultRules), "-n", ns, "--kubeconfig", kubeconfig, "-v=4")
	waitConvergedOn(t, cp, ns, 30*time.Second)
	p.WaitMetric(t, 10*time.Second, "workqueue_depth", 0)
	populated := p.LogLines(t, "Caches populated", configMapsType)
	retried := p.LogLines(t, watchRetried, configMapsResource)
	before := requestsOn(t, cp)

	proxy.Down()
	cutOff := time.Now()
	want, writes, summary := changeWhileCutOff(t, cp, ns, n)
	// The informer tries to resume its watch from the last resourceVersion
	// it saw, which the compaction below makes too old.
	waitLog(t, p, 10*time.Second, watchRetried, configMapsResource, retried+1)
	rev := compactEtcd(t, cp)
	if p.LogLines(t, h.WatchTooOld) != 0 || p.LogLines(t, "Caches populated", configMapsType) != populated {
		t.Fatalf("the controller relisted before the API server came back:\n%s", p.Output(t))
	}
	down := time.Since(cutOff)
	if err := proxy.Up(); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	waitConvergedOn(t, cp, ns, 60*time.Second)
	took := time.Since(up)
	waitLog(t, p, 30*time.Second, "Caches populated", configMapsType, populated+1)
	p.WaitMetric(t, 10*time.Second, "workqueue_depth", 0)
	cp.Quiet(t, 2*time.Second, "configmaps")
	served := requestsOn(t, cp).Sub(before)
	patched := served.Count("PATCH", "configmaps") + served.Count("APPLY", "configmaps")
	done, total := annotatedOn(t, cp, ns)
	expired, errs := p.LogLines(t, h.WatchTooOld, configMapsType), p.ErrorLines(t, "")

	t.Logf("%d ConfigMaps converged, then cut off for %v: %s; etcd compacted at revision %d. "+
		"On reconnect the configmaps watch got 410 Gone %d time(s) (%q), the informer relisted, and all %d of %d ConfigMaps "+
		"were annotated %v after the API server came back, with %d PATCH requests for %d objects that needed a write; %d error lines",
		n, down.Round(time.Millisecond), summary, rev, expired, h.WatchTooOld, done, total, took.Round(time.Millisecond), patched, writes, errs)
	if total != want || done != total {
		t.Errorf("%d of %d ConfigMaps annotated at the end, want all %d", done, total, want)
	}
	if expired == 0 {
		t.Errorf("the configmaps watch never expired (no %q logged): the scenario did not happen", h.WatchTooOld)
	}
	if patched != writes {
		t.Errorf("%d PATCH requests, want exactly %d: one per object that needed a write", patched, writes)
	}
	if errs > 5 {
		t.Errorf("%d error lines; want no error storm", errs)
	}
	p.MustRun(t, "before the end of the test")
}

// changeWhileCutOff creates ConfigMaps in ns and applies outageChanges to
// the n there are. It returns how many ConfigMaps there are then, how many
// of them the controller must write, and a summary for the log.
func changeWhileCutOff(t *testing.T, e *h.Env, ns string, n int) (total, writes int, summary string) {
	t.Helper()
	const created = 20
	for i := range created {
		e.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, fmt.Sprintf("new-%d", i)))
	}
	total, writes = n+created, created
	parts := []string{fmt.Sprintf("%d created", created)}
	for _, c := range outageChanges {
		for i := c.from; i <= c.to; i++ {
			changeConfigMap(t, e, ns, fmt.Sprintf("cm-%d", i), c.mutate)
		}
		count := c.to - c.from + 1
		switch {
		case c.mutate == nil:
			total -= count
		case c.write:
			writes += count
		}
		parts = append(parts, fmt.Sprintf("%d %s", count, c.name))
	}
	return total, writes, strings.Join(parts, ", ")
}

// changeConfigMap applies mutate to a ConfigMap with an update (PUT, so
// that the controller's PATCH requests can be counted apart), or deletes
// it when mutate is nil.
func changeConfigMap(t *testing.T, e *h.Env, ns, name string, mutate func(*unstructured.Unstructured)) {
	t.Helper()
	client := e.Dynamic.Resource(h.ConfigMaps).Namespace(ns)
	if mutate == nil {
		if err := client.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete configmap %s/%s: %v", ns, name, err)
		}
		return
	}
	u, err := client.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mutate(u)
	if _, err := client.Update(t.Context(), u, metav1.UpdateOptions{FieldManager: "e2e-user"}); err != nil {
		t.Fatalf("update configmap %s/%s: %v", ns, name, err)
	}
}

// compactEtcd compacts e's etcd at its current revision and returns it.
func compactEtcd(t *testing.T, e *h.Env) int64 {
	t.Helper()
	rev, err := e.EtcdRevision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CompactEtcd(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	return rev
}
