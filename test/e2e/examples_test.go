package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// persistentVolumeClaims is one of the resources the example rules.
var persistentVolumeClaims = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}

// examples/team-cost-center.yaml, as shipped, on a real control plane: the
// workloads, Pods and volume claims of a namespace labelled with a team get
// its team label and cost-center annotation, follow a change of the
// namespace's label within seconds, and those of a namespace without the
// label are left alone; diff then agrees that nothing is left to change.
func TestExampleTeamCostCenter(t *testing.T) {
	rulesFile := filepath.Join(h.RepoRoot(), "examples", "team-cost-center.yaml")
	ns, other := env.NewNamespace(t), env.NewNamespace(t)
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"payments"},"annotations":{"example.com/cost-center":"cc-4711"}}}`)
	objects := []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{h.Deployments, "web"}, {h.Pods, "worker"}, {persistentVolumeClaims, "data"}}
	for _, namespace := range []string{ns, other} {
		env.Create(t, h.Deployments, namespace, h.Deployment(t, namespace, "web", 0))
		env.Create(t, h.Pods, namespace, h.Pod(t, namespace, "worker"))
		env.Create(t, persistentVolumeClaims, namespace, h.FromYAML(t, `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`))
	}

	p := startRun(t, "--rules", rulesFile)
	defer p.Terminate(t)
	want := func(timeout time.Duration, team string) {
		t.Helper()
		start := time.Now()
		for _, o := range objects {
			waitMetadata(t, timeout-time.Since(start), o.gvr, ns, o.name, "team "+team+" and cost center cc-4711", func(a, l map[string]string) bool {
				return l["team"] == team && a["example.com/cost-center"] == "cc-4711"
			})
		}
	}
	want(15*time.Second, "payments")
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"team":"checkout"}}}`)
	want(5*time.Second, "checkout")

	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff -n %s after convergence: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", ns, code, out, stderr)
	}
	for _, o := range objects {
		u := env.Get(t, o.gvr, other, o.name)
		if hasKey(u.GetLabels(), "team") || hasKey(u.GetAnnotations(), "example.com/cost-center") {
			t.Errorf("%s %s/%s, in a namespace without a team label, got %v %v", o.gvr.Resource, other, o.name, u.GetLabels(), u.GetAnnotations())
		}
	}
}

// examples/cel.yaml, as shipped, on a real control plane (run -n): a
// Deployment is labelled replicated while it runs more than two replicas
// and loses the label when scaled down; its id is computed, and its
// priority is its Pod template's priority class, or the default where
// there is none; diff then agrees that nothing is left to change.
func TestExampleCEL(t *testing.T) {
	rulesFile := filepath.Join(h.RepoRoot(), "examples", "cel.yaml")
	ns := env.NewNamespace(t)
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "web", 3))
	small := h.Deployment(t, ns, "small", 1)
	if err := unstructured.SetNestedField(small.Object, "high", "spec", "template", "spec", "priorityClassName"); err != nil {
		t.Fatal(err)
	}
	env.Create(t, h.Deployments, ns, small)

	p := startRun(t, "--rules", rulesFile, "-n", ns)
	defer p.Terminate(t)
	want := func(name, replicated, priority string) {
		t.Helper()
		waitMetadata(t, 15*time.Second, h.Deployments, ns, name, "replicated "+replicated+", priority "+priority, func(a, l map[string]string) bool {
			return l["example.com/replicated"] == replicated && a["example.com/id"] == ns+"/"+name && a["example.com/priority"] == priority
		})
	}
	want("web", "true", "standard")
	want("small", "", "high")
	userSet(t, h.Deployments, ns, "web", `{"spec":{"replicas":1}}`)
	want("web", "", "standard")
	userSet(t, h.Deployments, ns, "small", `{"spec":{"replicas":5}}`)
	want("small", "true", "high")
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff -n %s after convergence: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", ns, code, out, stderr)
	}
}

// examples/defaults.yaml, as shipped, on a real control plane (run -n): a
// Pod nothing scheduled is annotated unscheduled, one bound to a node
// with the node's name; a Deployment gets the default cost center until
// its namespace names one, then follows it; diff then agrees that nothing
// is left to change.
func TestExampleDefaults(t *testing.T) {
	rulesFile := filepath.Join(h.RepoRoot(), "examples", "defaults.yaml")
	ns := env.NewNamespace(t)
	env.Create(t, h.Pods, ns, h.Pod(t, ns, "pending"))
	bound := h.Pod(t, ns, "bound")
	if err := unstructured.SetNestedField(bound.Object, "node-a", "spec", "nodeName"); err != nil {
		t.Fatal(err)
	}
	env.Create(t, h.Pods, ns, bound)
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "web", 0))

	p := startRun(t, "--rules", rulesFile, "-n", ns)
	defer p.Terminate(t)
	for name, node := range map[string]string{"pending": "unscheduled", "bound": "node-a"} {
		env.WaitForAnnotation(t, 15*time.Second, h.Pods, ns, name, "example.com/node", node)
	}
	env.WaitForAnnotation(t, 15*time.Second, h.Deployments, ns, "web", "example.com/cost-center", "unassigned")
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"annotations":{"example.com/cost-center":"cc-4711"}}}`)
	env.WaitForAnnotation(t, 10*time.Second, h.Deployments, ns, "web", "example.com/cost-center", "cc-4711")
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff -n %s after convergence: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", ns, code, out, stderr)
	}
}
