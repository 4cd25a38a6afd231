package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// The API server is cut off mid-convergence, with most objects still to
// write and a client limited to 40 requests per second, until every one
// of them has failed and waits for it. Once it is back, the objects that waited for it are written at once, at the
// client's rate, rather than when their backoffs end; the outage is
// logged in a few lines, not one per failed attempt.
func TestFaultRecoveryAfterOutage(t *testing.T) {
	ns := env.NewNamespace(t)
	const n, qps = 200, 40
	configMaps(t, ns, n)
	written := watchAnnotated(t, ns)
	proxy, kubeconfig := env.NewProxy(t)
	p := startRun(t, "--rules", writeFile(t, "rules.yaml", faultRules), "-n", ns, "--kubeconfig", kubeconfig,
		"--kube-api-qps", "40", "--kube-api-burst", "1")
	written.wait(t, 20, 30*time.Second) // converging

	proxy.Down()
	down := time.Now()
	linesAtDown := lines(p.Output(t))
	waitOutageSeen(t, p, 30*time.Second)
	outage := time.Since(down)
	left := n - written.count()
	if err := proxy.Up(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	logged := lines(p.Output(t))[len(linesAtDown):]

	written.wait(t, n, 60*time.Second)
	first, last := written.between(back)
	took := last.Sub(back)
	limit := time.Second + time.Duration(left)*time.Second/qps
	t.Logf("outage of %v with %d of %d objects left: the first written %v and all %v after the API server was back (limit %v); "+
		"%d lines logged during the outage",
		outage.Round(time.Millisecond), left, n, first.Sub(back).Round(time.Millisecond), took.Round(time.Millisecond), limit, len(logged))
	if left < 120 {
		t.Errorf("%d objects left at the outage, want at least 120: the scenario did not happen", left)
	}
	if took > limit {
		t.Errorf("the %d objects left were written %v after the API server was back, want at most 1 s + %d/%d/s = %v",
			left, took.Round(time.Millisecond), left, qps, limit)
	}
	if len(logged) > 20 {
		t.Errorf("%d lines logged during the outage, want at most 20:\n%s", len(logged), strings.Join(logged, "\n"))
	}
	p.MustRun(t, "after the outage")
}

// lines splits a log into its complete lines.
func lines(log string) []string {
	if i := strings.LastIndexByte(log, '\n'); i >= 0 {
		return strings.Split(log[:i], "\n")
	}
	return nil
}

// annotatedTimes records when each ConfigMap cm-… of a namespace first
// carried fault=ok, as a watch on the API server saw it.
type annotatedTimes struct {
	mu sync.Mutex
	at map[string]time.Time
}

// watchAnnotated watches the ConfigMaps of ns, on the suite's API server
// directly, until the test ends.
func watchAnnotated(t *testing.T, ns string) *annotatedTimes {
	t.Helper()
	client := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns)
	list, err := client.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := client.Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	a := &annotatedTimes{at: map[string]time.Time{}}
	for i := range list.Items {
		a.see(&list.Items[i])
	}
	go func() {
		for ev := range w.ResultChan() {
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				a.see(u)
			}
		}
	}()
	return a
}

// see records u's time if it is annotated for the first time.
func (a *annotatedTimes) see(u *unstructured.Unstructured) {
	now := time.Now()
	if !strings.HasPrefix(u.GetName(), "cm-") || u.GetAnnotations()["fault"] != "ok" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.at[u.GetName()]; !ok {
		a.at[u.GetName()] = now
	}
}

// count is the number of ConfigMaps seen annotated.
func (a *annotatedTimes) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

// between returns when the first ConfigMap seen annotated after since was,
// and when the last of all was.
func (a *annotatedTimes) between(since time.Time) (first, last time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, at := range a.at {
		if at.After(since) && (first.IsZero() || at.Before(first)) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	return first, last
}

// wait waits until n ConfigMaps have been seen annotated.
func (a *annotatedTimes) wait(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return a.count() >= n, nil
	})
	if err != nil {
		t.Fatalf("%d ConfigMaps seen annotated after %v, want %d", a.count(), timeout, n)
	}
}
