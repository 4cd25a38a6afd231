package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// For rules that name their namespaces literally, rbac grants the writes
// only there: a Role in each, and list and watch alone in the ClusterRole.
// The controller, which still lists and watches every namespace, converges
// as a ServiceAccount bound to nothing else, and check, as it, finds its
// access ok.
func TestRBACLiteralNamespaces(t *testing.T) {
	nsA, nsB, nsC, saNS := env.NewNamespace(t), env.NewNamespace(t), env.NewNamespace(t), env.NewNamespace(t)
	for _, ns := range []string{nsA, nsB, nsC} {
		env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "cm"))
	}
	const key = "e2e.kube-annotator.io/confined"
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(
		"rules:\n- name: confined\n  resources: [configmaps]\n  namespaces: [%s, %s]\n  annotations: {%s: \"yes\"}\n", nsA, nsB, key))
	name := "ka-" + saNS // its own ClusterRole: others apply kube-annotator's
	// Its own field manager too: the keys other tests' controllers left
	// in other namespaces are not its to prune (where it may not patch).
	manifests, stderr, code := runCLI(t, "rbac", "--rules", rulesFile, "-n", saNS, "--name", name, "--field-manager", name, "--kubeconfig", env.Kubeconfig)
	if code != 0 {
		t.Fatalf("rbac: exit %d: %s", code, stderr)
	}
	roles := map[string][]rbacv1.PolicyRule{}
	for _, doc := range strings.Split(manifests, "---\n") {
		var obj struct {
			Kind     string
			Metadata struct{ Namespace string }
			Rules    []rbacv1.PolicyRule
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		roles[obj.Kind+" "+obj.Metadata.Namespace] = obj.Rules
	}
	for _, r := range roles["ClusterRole "] {
		if len(r.Resources) > 0 && r.Resources[0] == "configmaps" && strings.Join(r.Verbs, ",") != "list,watch" {
			t.Errorf("the ClusterRole grants %v on configmaps, want list and watch alone:\n%s", r.Verbs, manifests)
		}
	}
	for _, ns := range []string{nsA, nsB} {
		if _, ok := roles["Role "+ns]; !ok {
			t.Errorf("no Role in %s:\n%s", ns, manifests)
		}
	}
	if out, err := kubectl(t, manifests, "apply", "-f", "-"); err != nil {
		t.Fatalf("apply rbac: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = kubectl(t, manifests, "delete", "-f", "-") })

	sa := "system:serviceaccount:" + saNS + ":" + name
	for ns, want := range map[string]string{nsA: "yes", nsC: "no"} {
		out, _, _ := runCmd(t, kubectlCmd("auth", "can-i", "patch", "configmaps", "-n", ns, "--as", sa), "")
		if strings.TrimSpace(out) != want {
			t.Errorf("can %s patch configmaps in %s: %q, want %s", sa, ns, out, want)
		}
	}
	if out, stderr, code := runCLI(t, "check", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "--as", sa); code != 0 || !hasRow(out, []string{"confined", "configmaps", "configmaps.v1", "ok"}) {
		t.Errorf("check as %s: exit %d, want 0 and access ok:\n%s%s", sa, code, out, stderr)
	}

	p := startRun(t, "--rules", rulesFile, "--as", sa, "--field-manager", name, "--record-namespace", saNS, "--leader-elect", "--leader-election-namespace", saNS)
	env.WaitForAnnotation(t, 20*time.Second, h.ConfigMaps, nsA, "cm", key, "yes")
	env.WaitForAnnotation(t, 5*time.Second, h.ConfigMaps, nsB, "cm", key, "yes")
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return p.Ready(t) == 200, nil
	})
	if err != nil {
		t.Errorf("/readyz is not 200 as %s: %s", sa, p.Readyz(t))
	}
	if _, ok := env.Get(t, h.ConfigMaps, nsC, "cm").GetAnnotations()[key]; ok {
		t.Errorf("the ConfigMap in %s, which no rule selects, was annotated", nsC)
	}
	if log := p.Output(t); strings.Contains(log, "forbidden") {
		t.Errorf("the controller was refused something as %s:\n%s", sa, log)
	}
}
