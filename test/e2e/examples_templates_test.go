package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// examples/safe-to-evict.yaml, as shipped, on a real control plane with
// kube-controller-manager: a Deployment created whose Pods have an
// emptyDir gets the annotation in its pod template at creation, and its
// Pods have it; one without such a volume gets none, nor do its Pods.
// Without MutatingAdmissionPolicy v1 (1.35) the controller annotates the
// Pods and no template is written.
func TestExampleSafeToEvict(t *testing.T) {
	const key = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	ns := env.NewNamespace(t)
	startControllerManager(t, ns)
	example, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples", "safe-to-evict.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rulesFile := writeFile(t, "rules.yaml", inNamespace(t, string(example), ns)+probeRule(ns))
	degraded := startAdmission(t, ns, rulesFile)

	scratch := h.Deployment(t, ns, "scratch", 1)
	spec := scratch.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	spec["volumes"] = []any{map[string]any{"name": "tmp", "emptyDir": map[string]any{}}}
	created := env.Create(t, h.Deployments, ns, scratch)
	plain := env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "plain", 1))
	if got, ok := podTemplate(t, created).GetAnnotations()[key]; degraded == ok || !degraded && got != "true" {
		t.Errorf("scratch's pod template in the create response: %s=%q (present %v); want \"true\" with the policies, none without", key, got, ok)
	}
	if _, ok := podTemplate(t, plain).GetAnnotations()[key]; ok {
		t.Errorf("plain's pod template carries %s: it has no emptyDir or hostPath volume", key)
	}
	waitFor(t, 60*time.Second, "the Pod of scratch annotated", func() bool {
		list, err := env.Dynamic.Resource(h.Pods).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=scratch"})
		return err == nil && len(list.Items) == 1 && list.Items[0].GetAnnotations()[key] == "true"
	})
	waitFor(t, 60*time.Second, "the Pod of plain created", func() bool {
		list, err := env.Dynamic.Resource(h.Pods).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=plain"})
		return err == nil && len(list.Items) == 1
	})
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0: the plain Pod wants nothing", code, out, stderr)
	}
}

// inNamespace returns the rules of an example restricted to ns, so that
// its admission policies, which the API server drops a moment after they
// are deleted, never reach another test's objects: each rule's resources
// line is followed by namespaces: [ns].
func inNamespace(t *testing.T, rules, ns string) string {
	t.Helper()
	out := strings.ReplaceAll(rules, "\n  resources: [pods]\n", "\n  resources: [pods]\n  namespaces: ["+ns+"]\n")
	if out == rules {
		t.Fatal("the example has no rule on pods to restrict to the test's namespace")
	}
	return out
}
