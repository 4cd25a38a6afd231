package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// rolloutCRD is the part of Argo Rollouts' CRD that a Rollout's owner
// chain needs: its resource, kind and status subresource.
const rolloutCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rollouts.argoproj.io}
spec:
  group: argoproj.io
  scope: Namespaced
  names: {plural: rollouts, singular: rollout, kind: Rollout, listKind: RolloutList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

// rollouts are Argo Rollouts, as rolloutCRD serves them.
var rollouts = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}

// examples/rollout-roles.yaml, as shipped: a Pod's role in an Argo
// Rollout, read in CEL from the Rollout's status (ownerObject), through
// the Pod's ReplicaSet, with kube-controller-manager making the
// ReplicaSets' Pods: the stable ReplicaSet's Pods are labelled stable,
// the other's canary, as are those of a Rollout with no stable
// ReplicaSet; a Pod no Rollout manages gets the default; promoting the
// canary (status.stableRS) relabels the same running Pods. The
// controller runs as the identity `kube-annotator rbac` grants, which
// must let it watch Rollouts; explain shows the owner's field read, and
// where a fromOwner value of the same Rollout was read; diff, reading the
// owners once, finds nothing more to change.
func TestOwnerObject(t *testing.T) {
	env.InstallCRD(t, rolloutCRD)
	t.Cleanup(func() { env.DeleteCRD(t, "rollouts.argoproj.io") })
	startControllerManager(t)
	ns := env.NewNamespace(t)
	web := createRollout(t, ns, "web", "payments")
	other := createRollout(t, ns, "batch", "data")
	for _, rs := range []struct {
		owner      *unstructured.Unstructured
		name, hash string
	}{{web, "web-abc", "abc"}, {web, "web-def", "def"}, {other, "batch-x", "x"}} {
		env.Create(t, h.ReplicaSets, ns, rolloutReplicaSet(t, ns, rs.name, rs.hash, rs.owner))
	}
	setStableRS(t, ns, "web", "abc")
	bare := h.Pod(t, ns, "bare")
	bare.SetLabels(map[string]string{"app": "web", "rollouts-pod-template-hash": "none"})
	env.Create(t, h.Pods, ns, bare)
	example, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples", "rollout-roles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// A fromOwner value of the same owners, which their other caches read.
	rulesFile := writeFile(t, "rules.yaml", inNamespace(t, string(example), ns)+fmt.Sprintf(`- name: rollout-team
  resources: [pods]
  namespaces: [%s]
  labels:
    team: {fromOwner: {label: team, through: [replicasets.apps, rollouts.argoproj.io]}}
`, ns))
	as := grantRBAC(t, rulesFile, ns, "replicasets", "rollouts")
	startRun(t, "--rules", rulesFile, "--as", as, "--record-namespace", ns)

	teams := map[string]string{"abc": "payments", "def": "payments", "x": "data"}
	roles := func(want map[string]string) func([]unstructured.Unstructured) bool {
		return func(ps []unstructured.Unstructured) bool {
			return len(ps) == 4 && all(ps, func(p unstructured.Unstructured) bool {
				hash := p.GetLabels()["rollouts-pod-template-hash"]
				return p.GetLabels()["role"] == want[hash] && p.GetLabels()["team"] == teams[hash]
			})
		}
	}
	pods := waitPods(t, ns, "the stable ReplicaSet's Pod is stable, the canary's and the other Rollout's canary, the bare Pod's unknown",
		roles(map[string]string{"abc": "stable", "def": "canary", "x": "canary", "none": "unknown"}))
	i := slices.IndexFunc(pods, func(p unstructured.Unstructured) bool { return strings.HasPrefix(p.GetName(), "web-abc") })
	out, stderr, code := runCLI(t, "explain", "pods/"+pods[i].GetName(), "-n", ns, "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	if want := `ownerObject.status.stableRS = "abc"`; code != 0 || !strings.Contains(out, want) || !strings.Contains(out, `label "team" of Rollout "web"`) {
		t.Errorf("explain: exit %d, stdout:\n%s\nstderr:\n%s\nwant it to say %q", code, out, stderr, want)
	}

	setStableRS(t, ns, "web", "def")
	promoted := waitPods(t, ns, "the promoted canary's Pod is stable, the old stable's canary",
		roles(map[string]string{"abc": "canary", "def": "stable", "x": "canary", "none": "unknown"}))
	if got, want := podUIDs(promoted), podUIDs(pods); !slices.Equal(got, want) {
		t.Errorf("Pods after the promotion = %v, want the same Pods %v", got, want)
	}
	// diff reads the owners as the controller does: it finds nothing to change.
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff after the controller converged: exit %d, want 0\n%s%s", code, out, stderr)
	}
}

// createRollout creates the Rollout name in ns, labelled team, once the
// API server serves Rollouts.
func createRollout(t *testing.T, ns, name, team string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"team": team}}}}
	var out *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		out, err = env.Dynamic.Resource(rollouts).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("create Rollout %s/%s: not served within 30s", ns, name)
	}
	return out
}

// rolloutReplicaSet returns a ReplicaSet of one Pod that owner, a
// Rollout, controls, its Pods labelled app=web and with the template
// hash, as Argo Rollouts makes them.
func rolloutReplicaSet(t *testing.T, ns, name, hash string, owner *unstructured.Unstructured) *unstructured.Unstructured {
	return h.FromYAML(t, fmt.Sprintf(`
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: %[1]s
  namespace: %[2]s
  ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: %[4]s, uid: %[5]s, controller: true}]
spec:
  replicas: 1
  selector: {matchLabels: {app: web, rollouts-pod-template-hash: %[3]s}}
  template:
    metadata: {labels: {app: web, rollouts-pod-template-hash: %[3]s}}
    spec: {containers: [{name: app, image: registry.invalid/app:1}]}
`, name, ns, hash, owner.GetName(), owner.GetUID()))
}

// setStableRS sets the status.stableRS of the Rollout name in ns, as
// Argo Rollouts does when it promotes a ReplicaSet.
func setStableRS(t *testing.T, ns, name, hash string) {
	t.Helper()
	body := fmt.Sprintf(`{"status":{"stableRS":%q}}`, hash)
	if _, err := env.Dynamic.Resource(rollouts).Namespace(ns).Patch(t.Context(), name, types.MergePatchType, []byte(body),
		metav1.PatchOptions{FieldManager: "rollouts-controller"}, "status"); err != nil {
		t.Fatalf("set the stableRS of Rollout %s/%s: %v", ns, name, err)
	}
}
