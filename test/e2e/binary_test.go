package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/discovery"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A bad rules file stops `run` before it sends a single request.
func TestRunRejectsBadRulesBeforeTouchingTheCluster(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "unexpected", http.StatusInternalServerError)
	}))
	defer srv.Close()
	kubeconfig := writeFile(t, "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+srv.URL+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
	rulesFile := writeFile(t, "rules.yaml", `rules:
- name: frigates
  resources: [frigates.ship.nwiizo.dev]
  annotations: {sample-controller: "True"}
- name: workloads
  resource: [deployments]
  annotations:
    sample-controller: True
`)
	_, stderr, code := runCLI(t, "run", "--rules", rulesFile, "--kubeconfig", kubeconfig)
	if code != 1 {
		t.Fatalf("exit code %d, want 1; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		rulesFile + `:6: rules[1].resource: unknown field (did you mean "resources"?)`,
		rulesFile + `:5: rules[1].resources: required field is missing`,
		rulesFile + `:8: rules[1].annotations.sample-controller: value must be a string; quote it: "True"`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q; got:\n%s", want, stderr)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the API server received %d requests, want 0", n)
	}
}

// The binary converges objects, keeps running when a resource is not
// served, and exits 0 on SIGTERM.
func TestRunBinary(t *testing.T) {
	ns := env.NewNamespace(t)
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "before"))
	rulesFile := writeFile(t, "rules.yaml", `rules:
- name: missing
  resources: [widgets.example.com]
  annotations: {a: "1"}
- name: cms
  resources: [cm]
  annotations: {example.com/owner: platform}
`)
	p := proc.StartProcess(t, "kube-annotator", exec.Command(binary, "run", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns))

	env.WaitForAnnotation(t, 15*time.Second, h.ConfigMaps, ns, "before", "example.com/owner", "platform")
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "after"))
	env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, ns, "after", "example.com/owner", "platform")

	p.Terminate(t)
	log := p.Output(t)
	for _, want := range []string{`Resource not served; its rules are not enforced`, `widgets.example.com`, `Stopped`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q; got:\n%s", want, log)
		}
	}
}

// Resource names resolve as kubectl resolves them.
func TestResolve(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	r := resolve.New(dc)
	tests := []struct {
		name       string
		want       string // resource.version.group
		namespaced bool
		wantErr    string
	}{
		{name: "deployments", want: "deployments.v1.apps", namespaced: true},
		{name: "deployment", want: "deployments.v1.apps", namespaced: true},
		{name: "deploy", want: "deployments.v1.apps", namespaced: true},
		{name: "deployments.apps", want: "deployments.v1.apps", namespaced: true},
		{name: "deployments.v1.apps", want: "deployments.v1.apps", namespaced: true},
		{name: "rs", want: "replicasets.v1.apps", namespaced: true},
		{name: "po", want: "pods.v1", namespaced: true},
		{name: "pod", want: "pods.v1", namespaced: true},
		{name: "frigates.ship.nwiizo.dev", want: "frigates.v1beta1.ship.nwiizo.dev", namespaced: true},
		{name: "frigate", want: "frigates.v1beta1.ship.nwiizo.dev", namespaced: true},
		{name: "frigates.v1beta1.ship.nwiizo.dev", want: "frigates.v1beta1.ship.nwiizo.dev", namespaced: true},
		{name: "ns", want: "namespaces.v1", namespaced: false},
		{name: "clusterroles.rbac.authorization.k8s.io", want: "clusterroles.v1.rbac.authorization.k8s.io", namespaced: false},
		{name: "nosuch", wantErr: `resource "nosuch" not found on the server`},
		{name: "frigates.wrong.example.com", wantErr: `resource "frigates.wrong.example.com" not found`},
		{name: "deployments.v9.apps", wantErr: `resource "deployments.v9.apps" not found`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Resolve(tc.name)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve(%q) = %v, %v; want error containing %q", tc.name, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.name, err)
			}
			if s := source.GVRString(got.GVR); s != tc.want || got.Namespaced != tc.namespaced {
				t.Errorf("Resolve(%q) = %s namespaced=%v, want %s namespaced=%v", tc.name, s, got.Namespaced, tc.want, tc.namespaced)
			}
		})
	}
}

// `make demo` runs test/demo; it must bring everything up and annotate it.
func TestDemo(t *testing.T) {
	cmd := exec.Command("go", "run", "./test/demo", "--binary", binary, "--rules", "rules.yaml", "--exit-after-ready")
	cmd.Dir = h.RepoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{"Deployment   web", "Frigate      frigate-sample", "Stopped everything the demo started"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(string(out), "   True\n"); n != 5 {
		t.Errorf("demo table shows %d objects annotated True, want 5 (Deployment, ReplicaSet, 2 Pods, Frigate):\n%s", n, out)
	}
}

// A resync syncs every cached object again; on converged objects that
// writes nothing.
func TestResyncWritesNothing(t *testing.T) {
	ns := env.NewNamespace(t)
	const n = 100
	configMaps(t, ns, n)
	p := startRun(t, "--rules", writeFile(t, "rules.yaml", faultRules), "-n", ns, "--resync-period", "1s")
	waitConverged(t, ns, 30*time.Second)
	writes := p.Metric(t, "kube_annotator_writes_total")
	if writes != n {
		t.Errorf("%v writes to converge %d ConfigMaps, want %d", writes, n, n)
	}
	before := p.Metric(t, "kube_annotator_syncs_total")
	env.Quiet(t, 3500*time.Millisecond, "configmaps") // fails on any write
	if synced := p.Metric(t, "kube_annotator_syncs_total") - before; synced < 2*n {
		t.Errorf("%v syncs in 3.5s with --resync-period 1s, want at least two resyncs of %d objects", synced, n)
	} else {
		t.Logf("%v syncs in 3.5s of resyncs, 0 writes", synced)
	}
	if got := p.Metric(t, "kube_annotator_writes_total"); got != writes {
		t.Errorf("the controller wrote %v times during resyncs, want 0", got-writes)
	}
}
