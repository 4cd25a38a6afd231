package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/kubelet"
)

// replaceFile writes content next to path and renames it over path, as
// editors and `kubectl cp`-style tools do.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// watches returns how many WATCH connections the API server holds on
// resource in one namespace, from every client (itself included).
func watches(t *testing.T, resource string) float64 {
	t.Helper()
	n, err := env.ServerMetric(t.Context(), "apiserver_longrunning_requests",
		map[string]string{"verb": "WATCH", "resource": resource, "scope": "namespace"})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitWatches waits until watches(resource) is want.
func waitWatches(t *testing.T, resource string, want float64) {
	t.Helper()
	var got float64
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		got = watches(t, resource)
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("API server has %v namespaced WATCH connections on %s, want %v: %v", got, resource, want, err)
	}
}

const frigateDoc = `
apiVersion: fleet.example.com/v1beta1
kind: Frigate
metadata: {name: %s}
spec: {foo: bar}
`

// Rules change while the controller runs; resources come and go.
func TestLiveRules(t *testing.T) {
	ns := env.NewNamespace(t)
	crd, frigates := h.FrigateCRDInGroup(t, "fleet.example.com")
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "settings"))
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "web", 0))

	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	const base = `rules:
- name: fleet
  resources: [frigates.fleet.example.com]
  annotations: {live: "a"}
- name: apps
  resources: [deployments]
  annotations: {live: "a"}
`
	replaceFile(t, rulesFile, base)
	p := startRun(t, "--rules", rulesFile, "-n", ns)

	t.Run("a missing CRD does not stop the others", func(t *testing.T) {
		env.WaitForAnnotation(t, 15*time.Second, h.Deployments, ns, "web", "live", "a")
		p.WaitMetric(t, 5*time.Second, "kube_annotator_resources_unresolved", 1)
		p.WaitMetric(t, 5*time.Second, "kube_annotator_informers", 1)
		if code := p.Ready(t); code != 200 {
			t.Errorf("/readyz = %d, want 200", code)
		}
	})

	t.Run("CRD installed after start is picked up within 10s", func(t *testing.T) {
		installed := time.Now()
		env.InstallCRD(t, crd)
		env.CreateWhenServed(t, frigates, ns, strings.ReplaceAll(frigateDoc, "%s", "f1"))
		env.WaitForAnnotation(t, 10*time.Second-time.Since(installed), frigates, ns, "f1", "live", "a")
		t.Logf("frigate annotated %v after the CRD was created", time.Since(installed).Round(time.Millisecond))
		p.WaitMetric(t, 5*time.Second, "kube_annotator_resources_unresolved", 0)
	})

	withConfigMaps := base + `- name: settings
  resources: [configmaps]
  annotations: {live: "a"}
`
	baseWatches := watches(t, "configmaps")
	t.Run("write-and-rename adds configmaps within 5s", func(t *testing.T) {
		replaceFile(t, rulesFile, withConfigMaps)
		env.WaitForAnnotation(t, 5*time.Second, h.ConfigMaps, ns, "settings", "live", "a")
		p.WaitMetric(t, 5*time.Second, "kube_annotator_informers", 3)
		waitWatches(t, "configmaps", baseWatches+1)
	})

	t.Run("an invalid file keeps the previous rules", func(t *testing.T) {
		replaceFile(t, rulesFile, strings.Replace(withConfigMaps, `{live: "a"}`, `{live: True}`, 1))
		p.WaitMetric(t, 5*time.Second, "kube_annotator_rules_last_reload_successful", 0)
		if !strings.Contains(p.Output(t), `rules[0].annotations.live: value must be a string; quote it: \"True\"`) {
			t.Errorf("log does not name the invalid field:\n%s", p.Output(t))
		}
		env.SetAnnotations(t, h.ConfigMaps, ns, "settings", map[string]*string{"live": h.Ptr("x")})
		env.WaitForAnnotation(t, 5*time.Second, h.ConfigMaps, ns, "settings", "live", "a")
	})

	t.Run("fixing it applies the new rules; removed resources stop their informer", func(t *testing.T) {
		replaceFile(t, rulesFile, strings.ReplaceAll(base, `{live: "a"}`, `{live: "b"}`))
		p.WaitMetric(t, 5*time.Second, "kube_annotator_rules_last_reload_successful", 1)
		env.WaitForAnnotation(t, 5*time.Second, h.Deployments, ns, "web", "live", "b")
		env.WaitForAnnotation(t, 5*time.Second, frigates, ns, "f1", "live", "b")
		p.WaitMetric(t, 5*time.Second, "kube_annotator_informers", 2)
		waitWatches(t, "configmaps", baseWatches)
	})

	t.Run("deleting and re-creating the CRD", func(t *testing.T) {
		errorsBefore := p.ErrorLines(t, "frigates")
		env.DeleteCRD(t, "frigates.fleet.example.com")
		p.WaitMetric(t, 15*time.Second, "kube_annotator_informers", 1)
		p.WaitMetric(t, 5*time.Second, "kube_annotator_resources_unresolved", 1)
		installed := time.Now()
		env.InstallCRD(t, crd)
		env.CreateWhenServed(t, frigates, ns, strings.ReplaceAll(frigateDoc, "%s", "f2"))
		env.WaitForAnnotation(t, 10*time.Second-time.Since(installed), frigates, ns, "f2", "live", "b")
		n := p.ErrorLines(t, "frigates") - errorsBefore
		t.Logf("%d error lines about frigates; re-created CRD served and its frigate annotated %v after creation", n, time.Since(installed).Round(time.Millisecond))
		if n > 3 {
			t.Errorf("%d error lines about frigates while its CRD was deleted and re-created, want at most 3 (no error storm)", n)
		}
		env.DeleteCRD(t, "frigates.fleet.example.com")
	})
}

// A ConfigMap volume updates the file by swapping a ..data symlink; with
// --watch-rules=false only SIGHUP reloads.
func TestReloadConfigMapVolumeAndSIGHUP(t *testing.T) {
	ns := env.NewNamespace(t)
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "cm"))
	rulesFor := func(value string) string {
		return "rules:\n- name: cms\n  resources: [configmaps]\n  annotations: {volume: \"" + value + "\"}\n"
	}

	vol := kubelet.NewConfigMapVolume(t, t.TempDir(), map[string]string{"rules.yaml": rulesFor("v1")})
	p := startRun(t, "--rules", filepath.Join(vol.Dir, "rules.yaml"), "-n", ns)
	env.WaitForAnnotation(t, 15*time.Second, h.ConfigMaps, ns, "cm", "volume", "v1")
	vol.Update(map[string]string{"rules.yaml": rulesFor("v2")})
	env.WaitForAnnotation(t, 5*time.Second, h.ConfigMaps, ns, "cm", "volume", "v2")
	p.Terminate(t)

	plain := filepath.Join(t.TempDir(), "rules.yaml")
	replaceFile(t, plain, rulesFor("h1"))
	p = startRun(t, "--rules", plain, "-n", ns, "--watch-rules=false")
	env.WaitForAnnotation(t, 15*time.Second, h.ConfigMaps, ns, "cm", "volume", "h1")
	replaceFile(t, plain, rulesFor("h2"))
	env.Quiet(t, time.Second, "configmaps") // fails on any write
	if got := env.Get(t, h.ConfigMaps, ns, "cm").GetAnnotations()["volume"]; got != "h1" {
		t.Fatalf("with --watch-rules=false the file was reloaded without SIGHUP: volume=%q", got)
	}
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	env.WaitForAnnotation(t, 5*time.Second, h.ConfigMaps, ns, "cm", "volume", "h2")
}

// A reload whose rules set a key no object carries widens the cache
// instead of listing again: the API server serves no LIST and no new
// WATCH of the resource, and every object gets the key. One whose rules
// remove a key an object carries, whose value the cache dropped, lists
// again, and the key goes.
func TestReloadNewKeyWithoutList(t *testing.T) {
	ns := env.NewNamespace(t)
	names := []string{"a", "b", "c"}
	for _, name := range names {
		env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, name))
	}
	env.SetAnnotations(t, h.ConfigMaps, ns, "c", map[string]*string{"stale": h.Ptr("x")})
	const first = "rules:\n- name: cms\n  resources: [configmaps]\n  annotations: {first: \"1\"}\n"
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	replaceFile(t, rulesFile, first)
	p := startRun(t, "--rules", rulesFile, "-n", ns)
	for _, name := range names {
		env.WaitForAnnotation(t, 15*time.Second, h.ConfigMaps, ns, name, "first", "1")
	}
	relists := func(before h.Requests) int {
		d := requests(t).Sub(before)
		return d.Count("LIST", "configmaps") + d.Count("WATCH", "configmaps")
	}

	before := requests(t)
	replaceFile(t, rulesFile, strings.Replace(first, `{first: "1"}`, `{first: "1", second: "2"}`, 1))
	for _, name := range names {
		env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, ns, name, "second", "2")
	}
	if n := relists(before); n != 0 {
		t.Errorf("the API server served %d LIST or WATCH of configmaps for a reload that sets a new key, want 0", n)
	}
	if out := p.Output(t); !strings.Contains(out, "Widening cache") || strings.Contains(out, "Rebuilding informer") {
		t.Errorf("the log does not say that the cache widened without rebuilding:\n%s", out)
	}

	before = requests(t)
	replaceFile(t, rulesFile, strings.Replace(first, `{first: "1"}`, "{first: \"1\", second: \"2\"}\n  removeAnnotations: [stale]", 1))
	waitFor(t, 10*time.Second, "stale to be removed from c", func() bool {
		_, has := env.Get(t, h.ConfigMaps, ns, "c").GetAnnotations()["stale"]
		return !has
	})
	if n := relists(before); n == 0 {
		t.Errorf("no LIST or WATCH of configmaps for a reload that removes a key an object carried: its value was not in the cache")
	}
}
