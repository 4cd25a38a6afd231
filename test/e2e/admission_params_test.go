package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// With the policies `kube-annotator admission` prints applied, and no
// controller running, a value read from a ConfigMap named in the object's
// namespace ({fromRef: {resource: configmaps, name: …}}) is in the very
// response to the request that creates the object: the policy reads the
// ConfigMap as its params. In a namespace without that ConfigMap the
// policy is skipped, and the object is created without the key, nor its
// default: the controller sets that later. Without MutatingAdmissionPolicy
// v1 (1.35) the policies are refused.
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
}
