package e2e

import (
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// sampleKey and sampleValue are the annotation the shipped rules.yaml sets
// on every object it selects.
const sampleKey, sampleValue = "sample-controller", "True"

func shippedRules(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(rulesPath())
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The seed scenario: the Frigate from the Kubebuilder tutorial and the
// workloads from the client-go hands-on, annotated by the shipped rules.
func TestSeedScenario(t *testing.T) {
	ns := env.NewNamespace(t)
	dep := h.Deployment(t, ns, "web", 1)
	dep.SetAnnotations(map[string]string{"team": "blue", sampleKey: "False"})
	env.Create(t, h.Frigates, ns, h.FrigateSample(t, ns))
	env.Create(t, h.Deployments, ns, dep)
	env.Create(t, h.ReplicaSets, ns, h.ReplicaSet(t, ns, "web-rs"))
	env.Create(t, h.Pods, ns, h.Pod(t, ns, "web-pod"))

	c := env.StartController(t, shippedRules(t), controller.Options{})

	existing := []struct {
		gvr  schema.GroupVersionResource
		name string
	}{
		{h.Frigates, "frigate-sample"},
		{h.Deployments, "web"},
		{h.ReplicaSets, "web-rs"},
		{h.Pods, "web-pod"},
	}
	for _, o := range existing {
		env.WaitForAnnotation(t, 10*time.Second, o.gvr, ns, o.name, sampleKey, sampleValue)
	}
	if got := env.Get(t, h.Deployments, ns, "web").GetAnnotations()["team"]; got != "blue" {
		t.Errorf("deployment annotation team = %q, want it untouched (blue)", got)
	}

	t.Run("objects created while running", func(t *testing.T) {
		f := h.FrigateSample(t, ns)
		f.SetName("frigate-late")
		env.Create(t, h.Frigates, ns, f)
		env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "late", 0))
		env.Create(t, h.Pods, ns, h.Pod(t, ns, "late-pod"))
		env.WaitForAnnotation(t, 10*time.Second, h.Frigates, ns, "frigate-late", sampleKey, sampleValue)
		env.WaitForAnnotation(t, 10*time.Second, h.Deployments, ns, "late", sampleKey, sampleValue)
		env.WaitForAnnotation(t, 10*time.Second, h.Pods, ns, "late-pod", sampleKey, sampleValue)
	})

	t.Run("a user's change is reverted, other annotations survive", func(t *testing.T) {
		env.SetAnnotations(t, h.Deployments, ns, "web", map[string]*string{sampleKey: h.Ptr("False"), "owner": h.Ptr("ops")})
		env.WaitForAnnotation(t, 10*time.Second, h.Deployments, ns, "web", sampleKey, sampleValue)
		env.SetAnnotations(t, h.Frigates, ns, "frigate-sample", map[string]*string{sampleKey: nil})
		env.WaitForAnnotation(t, 10*time.Second, h.Frigates, ns, "frigate-sample", sampleKey, sampleValue)
		got := env.Get(t, h.Deployments, ns, "web").GetAnnotations()
		if got["team"] != "blue" || got["owner"] != "ops" {
			t.Errorf("deployment annotations = %v, want team=blue and owner=ops kept", got)
		}
	})

	t.Run("steady state", func(t *testing.T) {
		// One patch per object that needed one: 4 existing (the Deployment's
		// "False" included), 3 created, 2 reverted. Echoes cost nothing.
		if got := c.Requests.Count("patch", "/namespaces/"+ns+"/"); got != 9 {
			t.Errorf("controller sent %d PATCH requests for the namespace, want 9", got)
		}
		env.Quiet(t, 10*time.Second, "frigates", "deployments", "replicasets", "pods")
		if got := c.Requests.Count("get", ""); got != 0 {
			t.Errorf("controller sent %d GET requests for single objects, want 0 (it reads its cache)", got)
		}
	})
}

// A cluster-scoped resource, named by its short name.
func TestClusterScoped(t *testing.T) {
	before := env.NewNamespace(t)
	env.StartController(t, `
rules:
- name: namespaces
  resources: [ns]
  annotations: {example.com/managed: "yes"}
`, controller.Options{Namespace: "ignored-for-cluster-scoped"})
	env.WaitForAnnotation(t, 10*time.Second, h.Namespaces, "", before, "example.com/managed", "yes")
	after := env.NewNamespace(t)
	env.WaitForAnnotation(t, 10*time.Second, h.Namespaces, "", after, "example.com/managed", "yes")
}

// With Options.Namespace, objects elsewhere are left alone.
func TestNamespaceScope(t *testing.T) {
	in, out := env.NewNamespace(t), env.NewNamespace(t)
	env.Create(t, h.ConfigMaps, in, h.Object("v1", "ConfigMap", in, "cm"))
	env.Create(t, h.ConfigMaps, out, h.Object("v1", "ConfigMap", out, "cm"))
	env.StartController(t, `
rules:
- name: cms
  resources: [configmaps]
  annotations: {scoped: "in"}
`, controller.Options{Namespace: in})
	env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, in, "cm", "scoped", "in")
	env.Quiet(t, time.Second, "configmaps") // fails on any write, outside the namespace too
	if got, ok := env.Get(t, h.ConfigMaps, out, "cm").GetAnnotations()["scoped"]; ok {
		t.Errorf("configmap outside the namespace got scoped=%q", got)
	}
}
