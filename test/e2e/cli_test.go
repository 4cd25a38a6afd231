package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

var (
	clusterRoles        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	clusterRoleBindings = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

// seed creates the seed scenario's objects in ns; the Pod already carries
// the annotation, the ReplicaSet has it set to "False".
func seed(t *testing.T, ns string) {
	env.Create(t, h.Frigates, ns, h.FrigateSample(t, ns))
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "web", 0))
	rs := h.ReplicaSet(t, ns, "web-rs")
	rs.SetAnnotations(map[string]string{sampleKey: "False"})
	env.Create(t, h.ReplicaSets, ns, rs)
	pod := h.Pod(t, ns, "web-pod")
	pod.SetAnnotations(map[string]string{sampleKey: sampleValue})
	env.Create(t, h.Pods, ns, pod)
}

func rulesPath() string { return filepath.Join(h.RepoRoot(), "rules.yaml") }

func TestOnce(t *testing.T) {
	ns := env.NewNamespace(t)
	seed(t, ns)
	stdout, stderr, code := runCLI(t, "once", "--rules", rulesPath(), "--kubeconfig", env.Kubeconfig, "-n", ns)
	if code != 0 {
		t.Fatalf("once exit %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// Examined and changed per resource, in the summary table.
	for _, row := range [][]string{
		{"deployments.v1.apps", "1", "1", "0"},
		{"replicasets.v1.apps", "1", "1", "0"},
		{"frigates.v1beta1.ship.nwiizo.dev", "1", "1", "0"},
		{"pods.v1", "1", "0", "0"},
		{"TOTAL", "4", "3", "0"},
	} {
		if !hasRow(stdout, row) {
			t.Errorf("summary lacks row %v:\n%s", row, stdout)
		}
	}
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{h.Frigates, "frigate-sample"}, {h.Deployments, "web"}, {h.ReplicaSets, "web-rs"}, {h.Pods, "web-pod"}} {
		if got := env.Get(t, o.gvr, ns, o.name).GetAnnotations()[sampleKey]; got != sampleValue {
			t.Errorf("%s %s: %s=%q after once, want %q", o.gvr.Resource, o.name, sampleKey, got, sampleValue)
		}
	}
	// Converged: a second run changes nothing.
	stdout, _, code = runCLI(t, "once", "--rules", rulesPath(), "--kubeconfig", env.Kubeconfig, "-n", ns)
	if code != 0 || !hasRow(stdout, []string{"TOTAL", "4", "0", "0"}) {
		t.Errorf("second once: exit %d, want 0 and nothing changed:\n%s", code, stdout)
	}
}

func hasRow(table string, cells []string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(cells) && strings.Join(f[:len(cells)], " ") == strings.Join(cells, " ") {
			return true
		}
	}
	return false
}

func TestDiff(t *testing.T) {
	ns := env.NewNamespace(t)
	seed(t, ns)
	base := []string{"--rules", rulesPath(), "--kubeconfig", env.Kubeconfig, "-n", ns}

	stdout, stderr, code := runCLIReadOnly(t, append([]string{"diff"}, base...)...)
	if code != 1 {
		t.Fatalf("diff exit %d, want 1 (changes pending); stderr:\n%s", code, stderr)
	}
	wantText := strings.Join([]string{
		"deployments.v1.apps " + ns + "/web",
		`  sample-controller: <none> → "True"`,
		"replicasets.v1.apps " + ns + "/web-rs",
		`  sample-controller: "False" → "True"`,
		"frigates.v1beta1.ship.nwiizo.dev " + ns + "/frigate-sample",
		`  sample-controller: <none> → "True"`,
		"",
	}, "\n")
	if stdout != wantText {
		t.Errorf("diff output:\n%s\nwant:\n%s", stdout, wantText)
	}

	stdout, _, code = runCLI(t, append([]string{"diff", "-o", "json"}, base...)...)
	var pending []struct {
		Resource, Namespace, Name string
		Changes                   []struct {
			Key string
			Old *string
			New string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &pending); err != nil || code != 1 || len(pending) != 3 {
		t.Fatalf("diff -o json: exit %d, %d objects, err %v:\n%s", code, len(pending), err, stdout)
	}
	if c := pending[1].Changes[0]; pending[1].Name != "web-rs" || c.Key != sampleKey || c.Old == nil || *c.Old != "False" || c.New != sampleValue {
		t.Errorf("diff -o json: second object %+v", pending[1])
	}

	if _, stderr, code := runCLI(t, append([]string{"once"}, base...)...); code != 0 {
		t.Fatalf("once exit %d: %s", code, stderr)
	}
	stdout, _, code = runCLI(t, append([]string{"diff", "-o", "yaml"}, base...)...)
	if code != 0 || strings.TrimSpace(stdout) != "[]" {
		t.Errorf("diff after once: exit %d, output %q; want 0 and []", code, stdout)
	}
}

// check reports each resource as ok, not found or forbidden for the user.
func TestCheck(t *testing.T) {
	env.Create(t, clusterRoles, "", h.FromYAML(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-check-restricted}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch]}
- {apiGroups: [ship.nwiizo.dev], resources: [frigates], verbs: [get, list, watch, patch]}
`))
	env.Create(t, clusterRoleBindings, "", h.FromYAML(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-check-restricted}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-check-restricted}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: e2e-restricted}]
`))
	rulesFile := writeFile(t, "rules.yaml", `rules:
- name: frigates
  resources: [frigate]
  annotations: {a: "1"}
- name: others
  resources: [widgets.example.com, cm]
  annotations: {b: "2"}
`)
	stdout, stderr, code := runCLI(t, "check", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "--as", "e2e-restricted")
	if code != 1 {
		t.Fatalf("check exit %d, want 1; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, row := range [][]string{
		{"frigates", "frigate", "frigates.v1beta1.ship.nwiizo.dev", "ok"},
		{"others", "widgets.example.com", "-", "not", "found"},
		{"others", "cm", "configmaps.v1", "forbidden:", "cannot", "patch"},
	} {
		if !hasRow(stdout, row) {
			t.Errorf("check output lacks %v:\n%s", row, stdout)
		}
	}
	// As the administrator, with the CRD rule only, everything is ok.
	okFile := writeFile(t, "ok.yaml", "rules:\n- name: f\n  resources: [frigates.ship.nwiizo.dev, deploy]\n  annotations: {a: \"1\"}\n")
	if stdout, stderr, code := runCLI(t, "check", "--rules", okFile, "--kubeconfig", env.Kubeconfig); code != 0 {
		t.Errorf("check as admin: exit %d\n%s%s", code, stdout, stderr)
	}
	// Two rules that may select the same objects and want different
	// values of one key are a warning, not a failure.
	overlapFile := writeFile(t, "overlap.yaml", "rules:\n"+
		"- {name: web, resources: [configmaps], selector: app=web, annotations: {team: web}}\n"+
		"- {name: front, resources: [configmaps], selector: tier=front, annotations: {team: front}}\n")
	stdout, stderr, code = runCLI(t, "check", "--rules", overlapFile, "--kubeconfig", env.Kubeconfig)
	want := `rules web and front may both select configmaps and want different things of annotation "team"`
	if code != 0 || !strings.Contains(stderr, want) || !hasRow(stdout, []string{"web", "configmaps", "configmaps.v1", "ok"}) {
		t.Errorf("check of overlapping rules: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0, ok rows and the warning %q", code, stdout, stderr, want)
	}
	if stdout, _, code := runCLI(t, "check", "--offline", "--rules", rulesFile); code != 0 || !strings.Contains(stdout, "valid (2 rules)") {
		t.Errorf("check --offline: exit %d: %s", code, stdout)
	}
}

// The output of rbac, applied, is enough for the controller to converge
// as the ServiceAccount; the test drives it as the kubectl plugin.
func TestRBACAndKubectlPlugin(t *testing.T) {
	ns := env.NewNamespace(t)
	seed(t, ns)
	saNS := env.NewNamespace(t)

	// kubectl-annotator on PATH makes `kubectl annotator` work.
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "kubectl-annotator")); err != nil {
		t.Fatal(err)
	}
	pluginCmd := func(args ...string) *exec.Cmd {
		cmd := kubectlCmd(args...)
		cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		return cmd
	}
	kubectl := func(stdin string, args ...string) (string, string, int) {
		return runCmd(t, pluginCmd(args...), stdin)
	}
	if out, errOut, code := kubectl("", "annotator", "version"); code != 0 || !strings.HasPrefix(out, "kube-annotator ") {
		t.Fatalf("kubectl annotator version: exit %d: %s%s", code, out, errOut)
	}
	if out, _, _ := kubectl("", "annotator", "--help"); !strings.Contains(out, "kubectl annotator COMMAND") {
		t.Errorf("kubectl annotator --help does not name itself as the plugin:\n%s", out)
	}

	manifests, errOut, code := kubectl("", "annotator", "rbac", "--rules", rulesPath(), "-n", saNS)
	if code != 0 {
		t.Fatalf("kubectl annotator rbac: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"kind: ServiceAccount", "kind: ClusterRole\n", "kind: ClusterRoleBinding", "- ship.nwiizo.dev", "- apps", "- deployments\n  - replicasets", "- patch"} {
		if !strings.Contains(manifests, want) {
			t.Errorf("rbac output lacks %q:\n%s", want, manifests)
		}
	}
	if out, errOut, code := kubectl(manifests, "apply", "-f", "-"); code != 0 {
		t.Fatalf("kubectl apply rbac: exit %d: %s%s", code, out, errOut)
	}
	t.Cleanup(func() { kubectl(manifests, "delete", "-f", "-") })

	sa := "system:serviceaccount:" + saNS + ":kube-annotator"
	proc.StartProcess(t, "kubectl annotator run", pluginCmd("annotator", "run", "--rules", rulesPath(), "--as", sa, "--record-namespace", saNS))
	env.WaitForAnnotation(t, 15*time.Second, h.Frigates, ns, "frigate-sample", sampleKey, sampleValue)
	env.WaitForAnnotation(t, 5*time.Second, h.Deployments, ns, "web", sampleKey, sampleValue)
	env.WaitForAnnotation(t, 5*time.Second, h.ReplicaSets, ns, "web-rs", sampleKey, sampleValue)
}

// The cluster's own namespaces are left alone unless the user says so.
func TestDefaultNamespaceExclusion(t *testing.T) {
	env.Create(t, h.ConfigMaps, "kube-system", h.Object("v1", "ConfigMap", "kube-system", "e2e-exclusion"))
	rulesFile := writeFile(t, "rules.yaml", "rules:\n- name: cms\n  resources: [configmaps]\n  annotations: {touched: \"yes\"}\n")
	base := []string{"once", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", "kube-system"}
	if _, stderr, code := runCLI(t, base...); code != 0 {
		t.Fatalf("once: exit %d: %s", code, stderr)
	}
	if _, ok := env.Get(t, h.ConfigMaps, "kube-system", "e2e-exclusion").GetAnnotations()["touched"]; ok {
		t.Fatalf("a ConfigMap in kube-system was annotated with the default --exclude-namespaces")
	}
	if _, stderr, code := runCLI(t, append(base, "--exclude-namespaces=")...); code != 0 {
		t.Fatalf("once --exclude-namespaces=: exit %d: %s", code, stderr)
	}
	if got := env.Get(t, h.ConfigMaps, "kube-system", "e2e-exclusion").GetAnnotations()["touched"]; got != "yes" {
		t.Errorf("with --exclude-namespaces= the ConfigMap in kube-system is not annotated")
	}
	// Excluding it again removes what the controller set there.
	if _, stderr, code := runCLI(t, base...); code != 0 {
		t.Fatalf("once: exit %d: %s", code, stderr)
	}
	if _, ok := env.Get(t, h.ConfigMaps, "kube-system", "e2e-exclusion").GetAnnotations()["touched"]; ok {
		t.Errorf("the annotation set before stayed after kube-system was excluded again")
	}
}
