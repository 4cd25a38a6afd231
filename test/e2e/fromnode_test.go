package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

var nodes = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

const zoneKey = "topology.kubernetes.io/zone"

// Values read from a Pod's Node (fromNode) follow the Node: a Pod bound
// to a Node gets its label, a Pod not yet scheduled the default until it
// is bound, a Node without the label gives the default, and a relabelled
// Node's Pods follow it. The controller runs as the identity that
// `kube-annotator rbac` grants for these rules, which must let it watch
// Nodes; explain says which Node a value was read from, and diff agrees
// with the controller.
func TestFromNode(t *testing.T) {
	ns := env.NewNamespace(t)
	n1, n2 := ns+"-n1", ns+"-n2"
	newNode(t, n1, map[string]string{zoneKey: "z1"}, map[string]string{"example.com/rack": "r1"})
	newNode(t, n2, nil, nil)
	env.Create(t, h.Pods, ns, podOn(t, ns, "bound", n1))
	env.Create(t, h.Pods, ns, h.Pod(t, ns, "pending"))
	env.Create(t, h.Pods, ns, podOn(t, ns, "bare", n2))
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: zone
  resources: [pods]
  namespaces: [%s]
  labels:
    zone: {fromNode: {label: %s}, default: unknown}
  annotations:
    rack: {fromNode: {annotation: example.com/rack}}
`, ns, zoneKey))

	as := grantRBAC(t, rulesFile, ns, "nodes")
	startRun(t, "--rules", rulesFile, "--as", as, "--record-namespace", ns)
	want := func(timeout time.Duration, pod, zone, rack string) {
		t.Helper()
		waitMetadata(t, timeout, h.Pods, ns, pod, fmt.Sprintf("zone %q, rack %q", zone, rack), func(a, l map[string]string) bool {
			return l["zone"] == zone && a["rack"] == rack && (rack != "" || !hasKey(a, "rack"))
		})
	}
	want(30*time.Second, "bound", "z1", "r1")
	want(15*time.Second, "pending", "unknown", "")
	want(15*time.Second, "bare", "unknown", "")

	out, stderr, code := runCLI(t, "explain", "pods/bound", "-n", ns, "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	if wantIn := fmt.Sprintf("read from the label %q of Node %q", zoneKey, n1); code != 0 || !strings.Contains(out, wantIn) {
		t.Errorf("explain: exit %d, stdout:\n%s\nstderr:\n%s\nwant it to say %q", code, out, stderr, wantIn)
	}

	// Bound through the binding subresource, as the scheduler binds it.
	bindPod(t, ns, "pending", n1)
	want(15*time.Second, "pending", "z1", "r1")

	// A relabelled Node's Pods follow within seconds (the deadline allows
	// for a loaded machine; the time taken is logged).
	userSet(t, nodes, "", n1, fmt.Sprintf(`{"metadata":{"labels":{%q:"z2"}}}`, zoneKey))
	userSet(t, nodes, "", n2, fmt.Sprintf(`{"metadata":{"labels":{%q:"z3"}}}`, zoneKey))
	start := time.Now()
	for pod, zone := range map[string]string{"bound": "z2", "pending": "z2", "bare": "z3"} {
		waitMetadata(t, 15*time.Second-time.Since(start), h.Pods, ns, pod, "zone "+zone, func(_, l map[string]string) bool { return l["zone"] == zone })
	}
	t.Logf("Node label changes propagated to 3 Pods in %v", time.Since(start))

	// The Node losing the label gives the default again.
	userSet(t, nodes, "", n1, fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, zoneKey))
	want(15*time.Second, "bound", "unknown", "r1")
	want(15*time.Second, "pending", "unknown", "r1")

	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff after convergence: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", code, out, stderr)
	}
}

// newNode creates a Node, which the API server stores without a kubelet,
// deleted when the test ends.
func newNode(t *testing.T, name string, labels, annotations map[string]string) {
	t.Helper()
	n := h.Object("v1", "Node", "", name)
	n.SetLabels(labels)
	n.SetAnnotations(annotations)
	env.Create(t, nodes, "", n)
	t.Cleanup(func() { _ = env.Dynamic.Resource(nodes).Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// bindPod binds the Pod name of ns to node through the binding
// subresource, as the scheduler binds it.
func bindPod(t *testing.T, ns, name, node string) {
	t.Helper()
	binding := h.FromYAML(t, fmt.Sprintf("apiVersion: v1\nkind: Binding\nmetadata: {name: %s, namespace: %s}\ntarget: {apiVersion: v1, kind: Node, name: %s}\n", name, ns, node))
	if _, err := env.Dynamic.Resource(h.Pods).Namespace(ns).Create(t.Context(), binding, metav1.CreateOptions{}, "binding"); err != nil {
		t.Fatalf("bind %s to %s: %v", name, node, err)
	}
}

// waitLabels waits until the object of gvr, ns and name carries the labels
// of want, a "" value for a label it must lack.
func waitLabels(t *testing.T, gvr schema.GroupVersionResource, ns, name string, want map[string]string) {
	t.Helper()
	waitMetadata(t, 30*time.Second, gvr, ns, name, fmt.Sprintf("labels %v", want), func(_, l map[string]string) bool {
		for k, v := range want {
			if l[k] != v || (v == "" && hasKey(l, k)) {
				return false
			}
		}
		return true
	})
}

// podOn returns a Pod created bound to a Node, as a Pod naming its node
// in spec.nodeName is.
func podOn(t *testing.T, ns, name, node string) *unstructured.Unstructured {
	p := h.Pod(t, ns, name)
	p.Object["spec"].(map[string]any)["nodeName"] = node
	return p
}

// grantRBAC applies what `kube-annotator rbac` prints for the rules file,
// its ServiceAccount in ns, and returns the ServiceAccount's user name;
// it fails the test when the grants name none of the resources read (a
// source's: "nodes"). The ClusterRole and its binding, named after ns, go
// when the test ends.
func grantRBAC(t *testing.T, rulesFile, ns string, read ...string) string {
	t.Helper()
	name := "e2e-" + ns
	manifests, stderr, code := runCLI(t, "rbac", "--rules", rulesFile, "-n", ns, "--name", name, "--leader-election=false", "--kubeconfig", env.Kubeconfig)
	if code != 0 {
		t.Fatalf("rbac: exit %d: %s", code, stderr)
	}
	for _, r := range read {
		if !strings.Contains(manifests, "- "+r+"\n") {
			t.Errorf("rbac grants nothing on %s:\n%s", r, manifests)
		}
	}
	t.Cleanup(func() {
		for _, gvr := range []schema.GroupVersionResource{clusterRoleBindings, clusterRoles} {
			_ = env.Dynamic.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	if out, err := kubectl(t, manifests, "apply", "--server-side", "--field-manager", "e2e", "-f", "-"); err != nil {
		t.Fatalf("apply rbac: %v\n%s", err, out)
	}
	return "system:serviceaccount:" + ns + ":" + name
}
