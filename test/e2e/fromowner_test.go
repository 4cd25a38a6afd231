package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// Values read from a Pod's owners (fromOwner) follow them, with
// kube-controller-manager running, so that the Deployment really makes a
// ReplicaSet and it Pods: the running Pods get the Deployment's label
// and their ReplicaSet's annotation; relabelling the Deployment relabels
// the same Pods (same UIDs, no new ReplicaSet); a rollout's new Pods get
// the value; a Pod orphaned when its Deployment is deleted with orphan
// propagation falls back to the default, as a bare Pod has it. A label
// the ReplicaSet selects its Pods by (app) is never changed, though the
// rules read another value for it: the Pods would be orphaned. The
// controller runs as the identity `kube-annotator rbac` grants, which
// must let it watch the owners; explain names the chain a value came
// through.
func TestFromOwner(t *testing.T) {
	startControllerManager(t)
	ns := env.NewNamespace(t)
	d := h.Deployment(t, ns, "web", 2)
	d.SetLabels(map[string]string{"team": "payments", "app": "other"})
	env.Create(t, h.Deployments, ns, d)
	env.Create(t, h.Pods, ns, h.Pod(t, ns, "bare"))
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: team
  resources: [pods]
  namespaces: [%s]
  labels:
    team: {fromOwner: {label: team}, default: none}
    app: {fromOwner: {label: app}}
  annotations:
    revision: {fromOwner: {annotation: deployment.kubernetes.io/revision, owner: replicasets.apps}}
`, ns))
	as := grantRBAC(t, rulesFile, ns, "replicasets", "deployments")
	startRun(t, "--rules", rulesFile, "--as", as, "--record-namespace", ns)

	// Listed by app=web: a Pod whose app the controller changed is not.
	pods := waitPods(t, ns, "the Deployment's 2 Pods carry its team and their ReplicaSet's revision", func(ps []unstructured.Unstructured) bool {
		return len(ps) == 2 && all(ps, func(p unstructured.Unstructured) bool {
			return p.GetLabels()["team"] == "payments" && p.GetAnnotations()["revision"] == "1"
		})
	})
	waitMetadata(t, 15*time.Second, h.Pods, ns, "bare", "team none", func(_, l map[string]string) bool { return l["team"] == "none" })
	out, stderr, code := runCLI(t, "explain", "pods/"+pods[0].GetName(), "-n", ns, "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	if want := `label "team" of Deployment "web", through ReplicaSet "`; code != 0 || !strings.Contains(out, want) {
		t.Errorf("explain: exit %d, stdout:\n%s\nstderr:\n%s\nwant it to say %q", code, out, stderr, want)
	}

	// Relabelling the Deployment relabels its running Pods: no rollout.
	uids := podUIDs(pods)
	userSet(t, h.Deployments, ns, "web", `{"metadata":{"labels":{"team":"checkout"}}}`)
	relabelled := waitPods(t, ns, "the same Pods carry the new team", func(ps []unstructured.Unstructured) bool {
		return len(ps) == 2 && all(ps, func(p unstructured.Unstructured) bool { return p.GetLabels()["team"] == "checkout" })
	})
	if got := podUIDs(relabelled); !slices.Equal(got, uids) {
		t.Errorf("Pods after the relabel = %v, want the same Pods %v", got, uids)
	}
	if rs := list(t, ns, "app=web", h.ReplicaSets); len(rs) != 1 {
		t.Errorf("ReplicaSets after the relabel = %d, want 1: no rollout", len(rs))
	}

	// A rollout's new Pods get the value, and their ReplicaSet's revision.
	userSet(t, h.Deployments, ns, "web", `{"spec":{"template":{"metadata":{"annotations":{"rollout":"2"}}}}}`)
	waitPods(t, ns, "a Pod of the new ReplicaSet carries the team and revision 2", func(ps []unstructured.Unstructured) bool {
		return slices.ContainsFunc(ps, func(p unstructured.Unstructured) bool {
			return p.GetAnnotations()["revision"] == "2" && p.GetLabels()["team"] == "checkout"
		})
	})

	// Orphaned: the ReplicaSets lose their owner, and the Pods' owners
	// have no team.
	orphan := metav1.DeletePropagationOrphan
	if err := env.Dynamic.Resource(h.Deployments).Namespace(ns).Delete(t.Context(), "web", metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, ns, "every Pod, orphaned, falls back to the default", func(ps []unstructured.Unstructured) bool {
		return len(ps) > 0 && all(ps, func(p unstructured.Unstructured) bool { return p.GetLabels()["team"] == "none" })
	})
}

// waitPods waits until check holds for the Pods labelled app=web in ns,
// and returns them, sorted by name.
func waitPods(t *testing.T, ns, what string, check func([]unstructured.Unstructured) bool) []unstructured.Unstructured {
	t.Helper()
	var ps []unstructured.Unstructured
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		ps = list(t, ns, "app=web", h.Pods)
		return check(ps), nil
	})
	if err != nil {
		var got []string
		for _, p := range ps {
			got = append(got, fmt.Sprintf("%s labels %v annotations %v", p.GetName(), p.GetLabels(), p.GetAnnotations()))
		}
		t.Fatalf("%s: not so after 60s; Pods:\n%s", what, strings.Join(got, "\n"))
	}
	return ps
}

// all reports whether every item of s satisfies f.
func all[T any](s []T, f func(T) bool) bool {
	return !slices.ContainsFunc(s, func(x T) bool { return !f(x) })
}

// podUIDs returns the UIDs of ps, by name.
func podUIDs(ps []unstructured.Unstructured) []string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.GetName()] = string(p.GetUID())
	}
	out := []string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}

// list returns the objects of gvr in ns that match the label selector sel,
// sorted by name.
func list(t *testing.T, ns, sel string, gvr schema.GroupVersionResource) []unstructured.Unstructured {
	t.Helper()
	l, err := env.Dynamic.Resource(gvr).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatalf("list %s in %s: %v", gvr.Resource, ns, err)
	}
	slices.SortFunc(l.Items, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return l.Items
}
