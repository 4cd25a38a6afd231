package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// A recorded value read from the admission request records who created an
// object: a Deployment created by an impersonated user carries the user's
// name in its create response; one that existed before the rule gets the
// default from the controller, never a guess, and so does one that a later
// update, by someone else, finds without the key; and what was recorded
// stays, whoever changes the object after. Without MutatingAdmissionPolicy
// v1 (1.35) every Deployment gets the default.
func TestRecordedCreator(t *testing.T) {
	ns := env.NewNamespace(t)
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "before", 0))
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: creator
  resources: [deployments]
  namespaces: [%s]
  annotations:
    example.com/created-by: {cel: request.userInfo.username, once: true, default: unknown}
`, ns)+probeRule(ns))
	const key = "example.com/created-by"
	env.GrantClusterAdmin(t, "alice")
	env.GrantClusterAdmin(t, "mallory")
	alice := impersonating(t, rest.ImpersonationConfig{UserName: "alice"})
	mallory := impersonating(t, rest.ImpersonationConfig{UserName: "mallory"})

	degraded := startAdmission(t, ns, rulesFile)
	created, err := alice.Resource(h.Deployments).Namespace(ns).Create(t.Context(), h.Deployment(t, ns, "web", 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "alice"
	if degraded {
		want = "unknown"
		checkCreated(t, degraded, created, map[string]string{key: want}, nil)
	} else if got := created.GetAnnotations()[key]; got != want {
		t.Errorf("web in the create response: %s=%q, want %q, who created it", key, got, want)
	}
	for _, name := range []string{"before", "web"} {
		w := map[string]string{"before": "unknown", "web": want}[name]
		waitMetadata(t, 15*time.Second, h.Deployments, ns, name, key+"="+w, func(a, _ map[string]string) bool { return a[key] == w })
	}

	// Someone else changes web: what was recorded stays.
	if _, err := mallory.Resource(h.Deployments).Namespace(ns).Patch(t.Context(), "web", "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// mallory creates one too: it is recorded as hers.
	if _, err := mallory.Resource(h.Deployments).Namespace(ns).Create(t.Context(), h.Deployment(t, ns, "later", 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantLater := map[bool]string{false: "mallory", true: "unknown"}[degraded]
	waitMetadata(t, 15*time.Second, h.Deployments, ns, "later", key+"="+wantLater, func(a, _ map[string]string) bool { return a[key] == wantLater })
	if got := env.Get(t, h.Deployments, ns, "web").GetAnnotations()[key]; got != want {
		t.Errorf("web after mallory's change: %s=%q, want %q as recorded", key, got, want)
	}
	// coverage counts the default apart: before is unrecorded (and so is
	// web without the policies).
	out, stderr, code := runCLI(t, "coverage", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns, "--state", "unrecorded")
	if code != 0 || !strings.Contains(out, "before") || strings.Contains(out, "web") != degraded {
		t.Errorf("coverage --state unrecorded: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0 and before listed (web too, only without the policies)", code, out, stderr)
	}
	// The controller would change nothing: what was recorded is kept.
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0: recorded values are kept", code, out, stderr)
	}
}
