package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// A Pod rule with podTemplates sets its keys in the pod template of a
// Deployment created, in the create response, so that the Pods that
// kube-controller-manager makes from it start with them, counted as the
// controller's own (the Pod marker) so that it writes none of them; a
// Deployment that existed before has its template never written, while
// its Pods get the keys from the controller. Without MutatingAdmissionPolicy
// v1 (1.35) no template is written and every Pod gets its keys from the
// controller.
func TestPodTemplates(t *testing.T) {
	ns := env.NewNamespace(t)
	startControllerManager(t, ns)
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "before", 1))
	// Its Pod exists before the rule: created after, it would record who
	// created it (kube-controller-manager).
	waitFor(t, 60*time.Second, "the Pod of before created", func() bool {
		list, err := env.Dynamic.Resource(h.Pods).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=before"})
		return err == nil && len(list.Items) == 1
	})
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: team
  resources: [pods]
  namespaces: [%s]
  podTemplates: true
  labels:
    team: payments
  annotations:
    example.com/created-by: {cel: request.userInfo.username, once: true, default: unknown}
`, ns)+probeRule(ns))
	env.GrantClusterAdmin(t, "carol")
	carol := impersonating(t, rest.ImpersonationConfig{UserName: "carol"})
	degraded := startAdmission(t, ns, rulesFile)

	created, err := carol.Resource(h.Deployments).Namespace(ns).Create(t.Context(), h.Deployment(t, ns, "web", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tmpl := podTemplate(t, created)
	switch {
	case degraded && (hasKey(tmpl.GetLabels(), "team") || hasKey(tmpl.GetAnnotations(), "example.com/created-by")):
		t.Errorf("web's pod template in the create response: %v %v, want no key without MutatingAdmissionPolicy v1", tmpl.GetLabels(), tmpl.GetAnnotations())
	case !degraded && (tmpl.GetLabels()["team"] != "payments" || tmpl.GetAnnotations()["example.com/created-by"] != "carol"):
		t.Errorf("web's pod template in the create response: labels %v, annotations %v; want team=payments, created-by=carol",
			tmpl.GetLabels(), tmpl.GetAnnotations())
	}
	if hasKey(created.GetLabels(), "team") {
		t.Errorf("web's own labels %v: the rule is for Pods, not Deployments", created.GetLabels())
	}

	// Every Pod gets the keys: web's from the template (the creator's
	// name), before's from the controller (the default).
	want := map[string]string{"web": "carol", "before": "unknown"}
	if degraded {
		want["web"] = "unknown"
	}
	for app, by := range want {
		waitFor(t, 60*time.Second, fmt.Sprintf("the Pods of %s labelled, created by %s", app, by), func() bool {
			list, err := env.Dynamic.Resource(h.Pods).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
			if err != nil || len(list.Items) == 0 {
				return false
			}
			for _, p := range list.Items {
				if p.GetLabels()["team"] != "payments" || p.GetAnnotations()["example.com/created-by"] != by {
					return false
				}
			}
			return true
		})
	}
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0: every Pod has its keys", code, out, stderr)
	}
	if !degraded {
		list, err := env.Dynamic.Resource(h.Pods).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list.Items {
			if owners := fieldOwners(t, &p, "f:labels", "team"); len(owners) != 1 || owners[0] != "kube-controller-manager/Update" {
				t.Errorf("Pod %s: team owned by %v, want only kube-controller-manager, which made it from the template: the controller counts it as its own and writes nothing", p.GetName(), owners)
			}
		}
	}

	// A Deployment that existed before the rule: its template is never
	// written, by the policy (updated now) nor the controller.
	userSet(t, h.Deployments, ns, "before", `{"metadata":{"labels":{"touched":"yes"}}}`)
	before := env.Get(t, h.Deployments, ns, "before")
	if tmpl := podTemplate(t, before); hasKey(tmpl.GetLabels(), "team") || hasKey(tmpl.GetAnnotations(), "example.com/created-by") {
		t.Errorf("before's pod template: labels %v, annotations %v; want no key of the rule: a template is written at creation only", tmpl.GetLabels(), tmpl.GetAnnotations())
	}
}

// podTemplate returns the pod template of a workload, as an object.
func podTemplate(t *testing.T, workload *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	m, _, err := unstructured.NestedMap(workload.Object, "spec", "template")
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}
