package e2e

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
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
	if !strings.Contains(stderr, "Kubernetes 1.36 and later serve") || !strings.Contains(stderr, "("+env.Features.Version+") does not serve it") {
		t.Errorf("admission's stderr does not say which versions serve the policies and that this one (%s) does not:\n%s", env.Features.Version, stderr)
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
// (the create response does not carry the rules' annotations). e is the
// control plane, ns a namespace of it, and rulesFile ends with
// probeRule(ns). It returns the controller's process.
func admissionRunDegraded(t *testing.T, e *h.Env, ns, rulesFile string) *proc.Process {
	t.Helper()
	t.Logf("%s does not serve MutatingAdmissionPolicy v1: checking that the controller does the policies' work", e.Features.Version)
	args := []string{"--rules", rulesFile, "--admission-policies"}
	if e != env {
		args = append(args, "--kubeconfig", e.Kubeconfig)
	}
	p := startRun(t, args...)
	waitLog(t, p, 15*time.Second, "Admission policies not installed", "Kubernetes 1.36 and later", 1)
	waitFor(t, 30*time.Second, "the controller is ready", func() bool { return p.Ready(t) == 200 })
	if st := promtext.MetricValue(p.Scrape(t), "kube_annotator_admission_policies_state", map[string]string{"state": "not-served"}); st != 1 {
		t.Errorf("kube_annotator_admission_policies_state{state=\"not-served\"} = %v, want 1", st)
	}
	if body := p.Readyz(t); !strings.Contains(body, "admission policies not installed") || !strings.Contains(body, "Kubernetes 1.36 and later") {
		t.Errorf("/readyz does not say that the admission policies are not installed, and from which version they are served:\n%s", body)
	}
	for i := range 3 {
		name := fmt.Sprintf("probe-%d", i)
		created := e.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, name))
		checkAnnotations(t, "created "+name, created, map[string]string{"probe": "", marker("configmaps"): ""})
		e.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, ns, name, "probe", "yes")
	}
	for _, line := range strings.Split(p.Output(t), "\n") {
		if strings.Contains(line, "Admission policies not installed") {
			t.Logf("the controller said: %s", line)
		}
	}
	if n := p.LogLines(t, "Admission policies not installed"); n != 1 {
		t.Errorf("said %d times that the admission policies are not installed, want once", n)
	}
	if n := p.LogLines(t, "Admission policies not synced"); n != 0 {
		t.Errorf("logged %d sync errors for an API the server does not serve, want none", n)
	}
	return p
}

// noAdmissionPolicyV1 are the flags of a Kubernetes 1.36 or later API
// server that does not serve MutatingAdmissionPolicy v1, as 1.35 does not.
// envtest's own value of disable-admission-plugins is kept.
var noAdmissionPolicyV1 = map[string]string{
	"runtime-config":            "admissionregistration.k8s.io/v1/mutatingadmissionpolicies=false,admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings=false",
	"disable-admission-plugins": "ServiceAccount,MutatingAdmissionPolicy",
}

// run --admission-policies on an API server without MutatingAdmissionPolicy
// v1 leaves every rule to the controller; once the API server serves it
// (restarted as by a cluster upgrade), the controller installs the
// policies within its 30 s resync, without a restart, and objects are then
// annotated in the create response. The server is a 1.36 or later one with
// the API turned off: a version without it cannot be upgraded in place.
func TestAdmissionPoliciesAfterUpgrade(t *testing.T) {
	if !env.Features.MutatingAdmissionPolicyV1 {
		t.Skipf("%s cannot serve MutatingAdmissionPolicy v1; the other admission tests check the degraded mode on it", env.Features.Version)
	}
	flags := maps.Clone(noAdmissionPolicyV1)
	// Exits within seconds of SIGTERM rather than wait for the
	// controller's watches to close (see TestFaultAPIServerRestart).
	flags["shutdown-send-retry-after"] = "true"
	e := h.StartControlPlane(t, h.Options{APIServerFlags: flags})
	if e.Features.MutatingAdmissionPolicyV1 {
		t.Fatalf("%s with %v still serves MutatingAdmissionPolicy v1", e.Features.Version, noAdmissionPolicyV1)
	}
	ns := e.NewNamespace(t)
	p := admissionRunDegraded(t, e, ns, writeFile(t, "rules.yaml", "rules:\n"+probeRule(ns)))

	if err := e.StopAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.StartAPIServerWith(t.Context(), map[string]string{"runtime-config": "", "disable-admission-plugins": "ServiceAccount"}); err != nil {
		t.Fatal(err)
	}
	waitLog(t, p, 90*time.Second, "Admission policies now served", "", 1) // a 30 s resync after a restart
	i := 0
	took := waitFor(t, 30*time.Second, "a ConfigMap is created with the probe rule's annotation", func() bool {
		i++
		name := fmt.Sprintf("probe-after-%d", i) // probeRule annotates probe-*
		return e.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, name)).GetAnnotations()["probe"] == "yes"
	})
	t.Logf("admission annotates created objects %v after the controller installed the policies", took.Round(time.Millisecond))
	if st := promtext.MetricValue(p.Scrape(t), "kube_annotator_admission_policies_state", map[string]string{"state": "synced"}); st != 1 {
		t.Errorf("kube_annotator_admission_policies_state{state=\"synced\"} = %v after the upgrade, want 1", st)
	}
	if body := p.Readyz(t); body != "ok\n" {
		t.Errorf("/readyz = %q after the upgrade, want \"ok\\n\"", body)
	}
}
