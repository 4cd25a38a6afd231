package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// The ask of a CSI driver's users, with Kubernetes' own volume binder
// running: a PersistentVolume carries the team label of the claim bound
// to it, through the claimRef the binder completes with the claim's UID,
// and follows the claim's relabel.
func TestFromRefBoundByController(t *testing.T) {
	startVolumeBinder(t)
	ns := env.NewNamespace(t)
	pv := ns + "-vol"
	data := env.Create(t, persistentVolumeClaims, ns, h.FromYAML(t, fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, labels: {team: payments}}
spec: {accessModes: [ReadWriteOnce], storageClassName: "", volumeName: %s, resources: {requests: {storage: 1Gi}}}
`, pv)))
	env.Create(t, persistentVolumes, "", h.FromYAML(t, fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %s, labels: {e2e: %s}}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp/%s}, claimRef: {namespace: %s, name: data}}
`, pv, ns, pv, ns)))
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		uid, _, _ := unstructured.NestedString(env.Get(t, persistentVolumes, "", pv).Object, "spec", "claimRef", "uid")
		return uid == string(data.GetUID()), nil
	})
	if err != nil {
		t.Fatalf("the volume binder did not bind %s to %s/data: %v", pv, ns, err)
	}
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: volume-team
  resources: [persistentvolumes]
  selector: e2e=%s
  labels:
    team: {fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, label: team}, default: unclaimed}
`, ns))
	startRun(t, "--rules", rulesFile, "--record-namespace", ns)
	waitMetadata(t, 30*time.Second, persistentVolumes, "", pv, "team payments", func(_, l map[string]string) bool { return l["team"] == "payments" })
	userSet(t, persistentVolumeClaims, ns, "data", `{"metadata":{"labels":{"team":"checkout"}}}`)
	waitMetadata(t, 30*time.Second, persistentVolumes, "", pv, "team checkout", func(_, l map[string]string) bool { return l["team"] == "checkout" })
}

// startVolumeBinder runs kube-controller-manager's volume binder alone
// until the test ends.
func startVolumeBinder(t *testing.T) {
	t.Helper()
	args := h.ControllerManagerArgs(env.Kubeconfig)
	for i, a := range args {
		if strings.HasPrefix(a, "--controllers=") {
			args[i] = "--controllers=persistentvolume-binder-controller"
		}
	}
	cmd := exec.Command(filepath.Join(h.AssetsDir(), "kube-controller-manager"), args...)
	c, err := proc.StartChildWithLog("kube-controller-manager", cmd, filepath.Join(t.TempDir(), "kcm.log"))
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
