package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// With the policies `kube-annotator admission` prints applied, and no
// controller running, a value read from a ConfigMap named in the object's
// namespace ({fromRef: {resource: configmaps, name: …}}) is in the very
// response to the request that creates the object: the policy reads the
// ConfigMap as its params. In a namespace without that ConfigMap the
// policy is skipped, and the object is created without the key, nor its
// default: the controller sets that later. The controller, with the RBAC
// `rbac --admission-policies` grants, may create the policy's binding.
// Without MutatingAdmissionPolicy v1 (1.35) the policies are refused.
func TestAdmissionConfigMapParams(t *testing.T) {
	withCM, without := env.NewNamespace(t), env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: owner
  resources: [configmaps]
  namespaces: [%s, %s]
  names: ['app-*']
  annotations: {owner: {fromRef: {resource: configmaps, name: team-defaults, data: owner}, default: nobody}}
`, withCM, without)+probeRule(withCM))
	if !env.Features.MutatingAdmissionPolicyV1 {
		admissionRefused(t, rulesFile)
		return
	}
	stderr := applyAdmission(t, rulesFile)
	if strings.Contains(stderr, "rule owner: annotations.owner") {
		t.Errorf("admission leaves the key read from the ConfigMap to the controller:\n%s", stderr)
	}
	waitPolicies(t, withCM, 10*time.Second)
	defaults := h.Object("v1", "ConfigMap", withCM, "team-defaults")
	defaults.Object["data"] = map[string]any{"owner": "alice"}
	env.Create(t, h.ConfigMaps, withCM, defaults)

	// The API server reads params through a cache it starts with the
	// policy: objects are created until one is admitted with the value.
	var created *unstructured.Unstructured
	i := 0
	waitFor(t, 15*time.Second, "an object is created with the owner read from team-defaults", func() bool {
		i++
		created = env.Create(t, h.ConfigMaps, withCM, h.Object("v1", "ConfigMap", withCM, fmt.Sprintf("app-%d", i)))
		return created.GetAnnotations()["owner"] != ""
	})
	t.Logf("%s admitted with the owner read from team-defaults", created.GetName())
	checkAnnotations(t, "created with team-defaults", created, map[string]string{"owner": "alice", marker("configmaps"): "owner"})

	bare := env.Create(t, h.ConfigMaps, without, h.Object("v1", "ConfigMap", without, "app-1"))
	checkAnnotations(t, "created without team-defaults", bare, map[string]string{"owner": "", marker("configmaps"): ""})

	bindsAsController(t, rulesFile, withCM, withCM+"-controller", "kube-annotator.owner.configmaps.team-defaults")
}

// bindsAsController checks that the controller, with the RBAC that `rbac
// --admission-policies` grants for rulesFile (applied as the account
// name of ns), may create the binding that refers to the ConfigMap read
// as params (a server-side dry run): the API server lets only who may
// get that ConfigMap, in every namespace, create such a binding.
func bindsAsController(t *testing.T, rulesFile, ns, name, binding string) {
	t.Helper()
	manifests, stderr, code := runCLI(t, "rbac", "--rules", rulesFile, "-n", ns, "--name", name, "--admission-policies", "--kubeconfig", env.Kubeconfig)
	if code != 0 {
		t.Fatalf("rbac: exit %d: %s", code, stderr)
	}
	if _, err := kubectl(t, manifests, "apply", "--server-side", "--field-manager", "e2e", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := kubectl(t, manifests, "delete", "--ignore-not-found", "-f", "-"); err != nil {
			t.Error(err)
		}
	})
	b, err := env.Dynamic.Resource(bindings).Get(t.Context(), binding, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(b.Object, "spec", "paramRef"); !found {
		t.Fatalf("binding %s has no paramRef", binding)
	}
	copied := &unstructured.Unstructured{Object: map[string]any{"apiVersion": b.GetAPIVersion(), "kind": b.GetKind(), "spec": b.Object["spec"]}}
	copied.SetName(binding + "-copy")
	controller := impersonating(t, rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}})
	var last error
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, last = controller.Resource(bindings).Create(t.Context(), copied, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last == nil, nil
	})
	if err != nil {
		t.Errorf("the controller may not create the binding that refers to a ConfigMap: %v", last)
	}
}
