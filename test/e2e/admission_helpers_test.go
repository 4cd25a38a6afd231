package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// marker is the annotation in which the default field manager's policies
// list the keys they set on objects of resource ("deployments.apps").
func marker(resource string) string { return resource + ".admission.kube-annotator.io/kube-annotator" }

var (
	policies = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies"}
	bindings = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings"}
)

// probeRule is the last rule of an admission test's rules file: it
// annotates the ConfigMaps named probe-* in ns, so that waitPolicies can
// tell when the API server applies the policies.
func probeRule(ns string) string {
	return fmt.Sprintf("- {name: probe, resources: [configmaps], namespaces: [%s], names: ['probe-*'], annotations: {probe: 'yes'}}\n", ns)
}

// deletePoliciesAtEnd deletes, when the test ends, every admission policy
// and binding kube-annotator manages, so that no other test meets them.
// Register it before starting a process that syncs policies: cleanups run
// in reverse, so the process is stopped first.
func deletePoliciesAtEnd(t *testing.T) {
	t.Cleanup(func() {
		sel := metav1.ListOptions{LabelSelector: admission.ManagedByLabel + "=" + admission.ManagedBy}
		for _, gvr := range []schema.GroupVersionResource{bindings, policies} {
			if err := env.Dynamic.Resource(gvr).DeleteCollection(context.Background(), metav1.DeleteOptions{}, sel); err != nil {
				t.Errorf("delete %s: %v", gvr.Resource, err)
			}
		}
	})
}

// applyArgs are kubectl's arguments to apply what `kube-annotator
// admission` prints, as the documentation gives them: apply, and delete the
// policies of rules that are gone.
var applyArgs = []string{"apply", "--prune", "-l", "kube-annotator.io/field-manager=kube-annotator",
	"--prune-allowlist=admissionregistration.k8s.io/v1/MutatingAdmissionPolicy",
	"--prune-allowlist=admissionregistration.k8s.io/v1/MutatingAdmissionPolicyBinding", "-f", "-"}

// applyAdmission runs `kube-annotator admission` on the rules file at path
// and applies what it prints with kubectl, as a user would; it returns
// what the command said on stderr. The policies are deleted when the test
// ends.
func applyAdmission(t *testing.T, path string) string {
	t.Helper()
	deletePoliciesAtEnd(t)
	stdout, stderr, code := runCLI(t, "admission", "--rules", path, "--kubeconfig", env.Kubeconfig)
	if code != 0 {
		t.Fatalf("admission: exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "does not serve it") {
		t.Errorf("admission says that %s does not serve the policies:\n%s", env.Features.Version, stderr)
	}
	if _, err := kubectl(t, stdout, applyArgs...); err != nil {
		t.Fatalf("%v\nmanifests:\n%s", err, stdout)
	}
	return stderr
}

// waitPolicies waits until the API server applies the policies, which it
// loads a second or so after they are written: it creates ConfigMaps
// probe-N in ns until one carries probe=yes, then deletes them. probeRule
// is the last rule, so its policy and binding are the last written, and
// the API server's caches, which follow each kind in order, then hold the
// others too.
func waitPolicies(t *testing.T, ns string, timeout time.Duration) {
	t.Helper()
	i := 0
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		i++
		got := env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, fmt.Sprintf("probe-%d", i)))
		return got.GetAnnotations()["probe"] == "yes", nil
	})
	if err != nil {
		t.Fatalf("the API server did not apply the admission policies within %v", timeout)
	}
	deleteProbes(t, ns, "probe", i)
}

// waitPolicyGone waits until the API server no longer applies a deleted
// policy that set key on the ConfigMaps of ns: it creates ConfigMaps
// gone-N until one lacks key, then deletes them.
func waitPolicyGone(t *testing.T, ns, key string, timeout time.Duration) {
	t.Helper()
	i := 0
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		i++
		got := env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, fmt.Sprintf("gone-%d", i)))
		_, set := got.GetAnnotations()[key]
		return !set, nil
	})
	if err != nil {
		t.Fatalf("the API server still applied the deleted policy after %v", timeout)
	}
	deleteProbes(t, ns, "gone", i)
}

// deleteProbes deletes the ConfigMaps prefix-1 … prefix-n of ns.
func deleteProbes(t *testing.T, ns, prefix string, n int) {
	t.Helper()
	for j := range n {
		if err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).Delete(t.Context(), fmt.Sprintf("%s-%d", prefix, j+1), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkAnnotations fails the test unless obj carries every annotation of
// want with its value; a want value "" means that the key must be absent.
func checkAnnotations(t *testing.T, what string, obj *unstructured.Unstructured, want map[string]string) {
	t.Helper()
	got := obj.GetAnnotations()
	for k, v := range want {
		have, ok := got[k]
		if (v == "" && ok) || (v != "" && have != v) {
			t.Errorf("%s %s: annotation %s = %q (present %v), want %q", what, obj.GetName(), k, have, ok, v)
		}
	}
}

// fieldOwners returns the field managers, each as manager/operation, whose
// managedFields entries of obj own key in set, "f:annotations" or
// "f:labels".
func fieldOwners(t *testing.T, obj *unstructured.Unstructured, set, key string) []string {
	t.Helper()
	var out []string
	for _, e := range obj.GetManagedFields() {
		if e.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Metadata map[string]map[string]json.RawMessage `json:"f:metadata"`
		}
		if err := json.Unmarshal(e.FieldsV1.Raw, &fields); err != nil {
			t.Fatal(err)
		}
		if _, ok := fields.Metadata[set]["f:"+key]; ok {
			out = append(out, e.Manager+"/"+string(e.Operation))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// waitFor polls cond every 100ms until it holds or timeout passes, and
// then fails the test with what.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("%s: not within %v", what, timeout)
	}
	return time.Since(start)
}

// policyExpression returns the expressions of the policy named name, or
// "" when there is none.
func policyExpression(t *testing.T, name string) string {
	t.Helper()
	p, err := env.Dynamic.Resource(policies).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	var b strings.Builder
	vars, _, _ := unstructured.NestedSlice(p.Object, "spec", "variables")
	for _, v := range vars {
		if m, ok := v.(map[string]any); ok {
			fmt.Fprintln(&b, m["expression"])
		}
	}
	return b.String()
}

// startControllerManager starts kube-controller-manager (see
// harness.ControllerManagerArgs) until the test ends. It exits with
// SIGTERM's status when stopped, which is no failure; its log is shown if
// the test failed. The Deployments and ReplicaSets of the test namespaces
// but keep, the test's own, are deleted first (clearWorkloads).
func startControllerManager(t *testing.T, keep ...string) {
	t.Helper()
	clearWorkloads(t, keep)
	c, err := proc.StartChildWithLog("kube-controller-manager", h.ControllerManagerCommand(env.Kubeconfig), filepath.Join(t.TempDir(), "kcm.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(proc.StopTimeout); errors.Is(err, proc.ErrKilled) {
			t.Errorf("kube-controller-manager still running %v after SIGTERM; killed it", proc.StopTimeout)
		}
		if t.Failed() {
			if out, err := c.ReadLog(); err == nil {
				t.Logf("kube-controller-manager log:\n%s", out)
			}
		}
	})
}

// clearWorkloads deletes the Deployments and ReplicaSets of every test
// namespace but keep. Tests run one at a time, so they are those of tests
// that ended, which a kube-controller-manager started now would first
// give Pods — hundreds, late in a run, at its client's rate of 20
// requests/s — before the test's own.
func clearWorkloads(t *testing.T, keep []string) {
	t.Helper()
	list, err := env.Dynamic.Resource(h.Namespaces).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list.Items {
		if !strings.HasPrefix(n.GetName(), "e2e-") || slices.Contains(keep, n.GetName()) {
			continue
		}
		for _, gvr := range []schema.GroupVersionResource{h.Deployments, h.ReplicaSets} {
			if err := env.Dynamic.Resource(gvr).Namespace(n.GetName()).DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				t.Fatalf("delete the %s left in %s: %v", gvr.Resource, n.GetName(), err)
			}
		}
	}
}

// watchCreated watches the objects of gvrs in ns that match the label
// selector sel, from now until the test ends, and returns a function that
// returns each object created meanwhile as its ADDED event carried it:
// what the API server stored at creation, which its create response
// carried too.
func watchCreated(t *testing.T, ns, sel string, gvrs ...schema.GroupVersionResource) func() []*unstructured.Unstructured {
	t.Helper()
	var mu sync.Mutex
	var created []*unstructured.Unstructured
	for _, gvr := range gvrs {
		client := env.Dynamic.Resource(gvr).Namespace(ns)
		l, err := client.List(t.Context(), metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		w, err := client.Watch(t.Context(), metav1.ListOptions{LabelSelector: sel, ResourceVersion: l.GetResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				if obj, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Added {
					mu.Lock()
					created = append(created, obj)
					mu.Unlock()
				}
			}
		}()
	}
	return func() []*unstructured.Unstructured {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(created)
	}
}
