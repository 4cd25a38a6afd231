package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// examples/per-container.yaml at admission: a Pod is created with one
// AppArmor annotation per container (which only takes effect when the Pod
// starts with it, and which the API server refuses to add later), a
// container's own profile kept; the controller then has nothing to
// change. Without MutatingAdmissionPolicy v1 (1.35) the Pod is created
// without them.
func TestAdmissionPerContainer(t *testing.T) {
	const prefix = "container.apparmor.security.beta.kubernetes.io/"
	ns := env.NewNamespace(t)
	example, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples", "per-container.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rulesFile := writeFile(t, "rules.yaml", inNamespace(t, string(example), ns)+probeRule(ns))
	degraded := startAdmission(t, ns, rulesFile)
	p := h.FromYAML(t, `
apiVersion: v1
kind: Pod
metadata: {name: two, annotations: {"`+prefix+`side": unconfined}}
spec: {containers: [{name: app, image: registry.invalid/app:1}, {name: side, image: registry.invalid/side:1}]}
`)
	created := env.Create(t, h.Pods, ns, p)
	checkCreated(t, degraded, created, map[string]string{prefix + "app": "runtime/default"}, nil)
	if got := created.GetAnnotations()[prefix+"side"]; got != "unconfined" {
		t.Errorf("the create response: %sside=%q, want the Pod's own unconfined kept", prefix, got)
	}
	if degraded {
		// The API server refuses AppArmor annotations added to a Pod after
		// its creation: only the admission policy can set them.
		return
	}
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", code, out, stderr)
	}
}

// A key set computed in CEL is set at admission and follows the object
// there: a ConfigMap is created labelled with its data, a change of its
// data in an update changes the label in the same request, a label the
// user changes in an update is kept, theirs; the controller then has
// nothing to change but to stop counting that label as its own. Without
// MutatingAdmissionPolicy v1 (1.35) the controller does the same after
// each write.
func TestAdmissionCopyFollows(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: data-labels
  resources: [configmaps]
  namespaces: [%s]
  names: [data-*]
  copy:
  - cel: {labels: "has(object.data) ? object.data : {}"}
`, ns)+probeRule(ns))
	degraded := startAdmission(t, ns, rulesFile)
	cm := h.Object("v1", "ConfigMap", ns, "data-1")
	cm.Object["data"] = map[string]any{"k": "1", "j": "1"}
	created := env.Create(t, h.ConfigMaps, ns, cm)
	checkCreated(t, degraded, created, nil, map[string]string{"k": "1", "j": "1"})
	labelled := func(want map[string]string) {
		t.Helper()
		waitLabels(t, h.ConfigMaps, ns, "data-1", want)
	}
	labelled(map[string]string{"k": "1", "j": "1"})
	updated, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).Patch(t.Context(), "data-1", types.MergePatchType,
		[]byte(`{"data":{"k":"2","j":"2"},"metadata":{"labels":{"j":"mine"}}}`), metav1.PatchOptions{FieldManager: "someone-else"})
	if err != nil {
		t.Fatal(err)
	}
	if l := updated.GetLabels(); !degraded && (l["k"] != "2" || l["j"] != "mine") {
		t.Errorf("the update response: labels %v, want k following the data (2) and j the user's (mine)", l)
	}
	labelled(map[string]string{"k": "2", "j": "mine"})
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "data-1", "j no more the controller's", func(a, _ map[string]string) bool {
		return !strings.Contains(a[marker("configmaps")], "label:j")
	})
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0: k follows, j is someone else's", code, out, stderr)
	}
}
