package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// The admission tests need an API server that serves MutatingAdmissionPolicy
// in admissionregistration.k8s.io/v1 (Kubernetes 1.36 and later). On one
// that does not (1.35), each checks instead what a user gets there, with
// the helpers below, and ends.

// admissionRefused checks, on an API server without MutatingAdmissionPolicy
// v1, what a user of `kube-annotator admission` gets: the policies printed,
// and kubectl's apply of them refused for the kind the server lacks.
func admissionRefused(t *testing.T, rulesFile string) {
	t.Helper()
	t.Logf("%s does not serve MutatingAdmissionPolicy v1: checking that applying the policies is refused", env.Features.Version)
	stdout, stderr, code := runCLI(t, "admission", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	if code != 0 || !strings.Contains(stdout, "apiVersion: admissionregistration.k8s.io/v1\n") {
		t.Fatalf("admission: exit %d, want 0 and the v1 policies:\n%s%s", code, stdout, stderr)
	}
	out, err := kubectl(t, stdout, applyArgs...)
	if err == nil || !strings.Contains(err.Error(), "MutatingAdmissionPolicy") {
		t.Errorf("kubectl apply of the policies: %v, want a refusal naming MutatingAdmissionPolicy\n%s", err, out)
	}
}

// admissionRunDegraded checks `run --admission-policies` on an API server
// without MutatingAdmissionPolicy v1: it says once, naming the version that
// serves the API, that the policies are not installed, logs no error loop,
// gets ready, and the controller annotates objects after they are created
// (the create response does not carry the rules' annotations). rulesFile
// ends with probeRule(ns).
func admissionRunDegraded(t *testing.T, ns, rulesFile string) {
	t.Helper()
	t.Logf("%s does not serve MutatingAdmissionPolicy v1: checking that the controller does the policies' work", env.Features.Version)
	p := startRun(t, "--rules", rulesFile, "--admission-policies")
	waitLog(t, p, 15*time.Second, "Admission policies not installed", "Kubernetes 1.36 and later", 1)
	waitFor(t, 30*time.Second, "the controller is ready", func() bool { return p.ready(t) == 200 })
	for i := range 3 {
		name := fmt.Sprintf("probe-%d", i)
		created := env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, name))
		checkAnnotations(t, "created "+name, created, map[string]string{"probe": "", marker("configmaps"): ""})
		env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, ns, name, "probe", "yes")
	}
	if n := p.logLines(t, "Admission policies not installed"); n != 1 {
		t.Errorf("said %d times that the admission policies are not installed, want once", n)
	}
	if n := p.logLines(t, "Admission policies not synced"); n != 0 {
		t.Errorf("logged %d sync errors for an API the server does not serve, want none", n)
	}
}
