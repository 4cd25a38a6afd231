package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// persistentVolumes are the volumes whose claims fromRef reads.
var persistentVolumes = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}

// Values read from the objects an object refers to (fromRef) follow them:
// a PersistentVolume carries the team label of the claim its
// spec.claimRef names, and follows a relabel of the claim; a volume whose
// claimRef names another UID than the claim's, or no claim, gets the
// default, and the value once its claimRef names the claim. A claim
// carries a data key of the ConfigMap the rule names, and follows it. The
// controller runs as the identity `kube-annotator rbac` grants, which
// grants the ConfigMap by name only: listing every ConfigMap would be
// forbidden. explain says where a value came from.
func TestFromRef(t *testing.T) {
	ns := env.NewNamespace(t)
	claim := func(name, team string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, labels: {team: %s}}\n"+
			"spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n", name, team)
	}
	data := env.Create(t, persistentVolumeClaims, ns, h.FromYAML(t, claim("data", "payments")))
	env.Create(t, persistentVolumeClaims, ns, h.FromYAML(t, claim("other", "search")))
	volume := func(name, claimRef string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s-%s, labels: {e2e: %s}}\n"+
			"spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp/%s}%s}\n", ns, name, ns, name, claimRef)
	}
	ref := func(name, uid string) string {
		return fmt.Sprintf(", claimRef: {kind: PersistentVolumeClaim, namespace: %s, name: %s, uid: %s}", ns, name, uid)
	}
	env.Create(t, persistentVolumes, "", h.FromYAML(t, volume("bound", ref("data", string(data.GetUID())))))
	env.Create(t, persistentVolumes, "", h.FromYAML(t, volume("stale", ref("data", "00000000-0000-0000-0000-000000000000"))))
	env.Create(t, persistentVolumes, "", h.FromYAML(t, volume("free", "")))
	env.Create(t, h.ConfigMaps, ns, h.FromYAML(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: team-defaults}\ndata: {owner: alice}\n"))
	env.Create(t, h.ConfigMaps, ns, h.FromYAML(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unrelated}\ndata: {owner: mallory}\n"))
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: volume-team
  resources: [persistentvolumes]
  selector: e2e=%[1]s
  labels:
    team: {fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, label: team}, default: none}
- name: claim-owner
  resources: [persistentvolumeclaims]
  namespaces: [%[1]s]
  labels:
    owner: {fromRef: {resource: configmaps, name: team-defaults, data: owner}, default: nobody}
`, ns))
	manifests, stderr, code := runCLI(t, "rbac", "--rules", rulesFile, "-n", ns, "--name", "e2e-"+ns, "--leader-election=false", "--kubeconfig", env.Kubeconfig)
	if want := "resourceNames:\n  - team-defaults\n  resources:\n  - configmaps\n"; code != 0 || !strings.Contains(manifests, want) {
		t.Errorf("rbac: exit %d, stderr %s; want the ConfigMap granted by name (%q):\n%s", code, stderr, want, manifests)
	}
	as := grantRBAC(t, rulesFile, ns, "persistentvolumeclaims", "persistentvolumes")
	startRun(t, "--rules", rulesFile, "--as", as, "--record-namespace", ns)

	team := func(volume, want string) {
		t.Helper()
		waitMetadata(t, 30*time.Second, persistentVolumes, "", ns+"-"+volume, "team "+want, func(_, l map[string]string) bool { return l["team"] == want })
	}
	team("bound", "payments")
	team("stale", "none") // another claim of the same name, once
	team("free", "none")
	owner := func(claim, want string) {
		t.Helper()
		waitMetadata(t, 30*time.Second, persistentVolumeClaims, ns, claim, "owner "+want, func(_, l map[string]string) bool { return l["owner"] == want })
	}
	owner("data", "alice")
	owner("other", "alice")
	out, stderr, code := runCLI(t, "explain", "persistentvolumes/"+ns+"-bound", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	if want := fmt.Sprintf(`label "team" of PersistentVolumeClaim "%s/data"`, ns); code != 0 || !strings.Contains(out, want) {
		t.Errorf("explain: exit %d, stdout:\n%s\nstderr:\n%s\nwant it to say %q", code, out, stderr, want)
	}

	// The volume follows its claim's relabel; the claim follows the
	// ConfigMap's data.
	userSet(t, persistentVolumeClaims, ns, "data", `{"metadata":{"labels":{"team":"checkout"}}}`)
	team("bound", "checkout")
	userSet(t, h.ConfigMaps, ns, "team-defaults", `{"data":{"owner":"bob"}}`)
	owner("data", "bob")
	owner("other", "bob")

	// A volume whose claimRef comes to name the claim's UID gets its label.
	userSet(t, persistentVolumes, "", ns+"-stale", fmt.Sprintf(`{"spec":{"claimRef":{"uid":%q}}}`, data.GetUID()))
	team("stale", "checkout")
}

// A ConfigMap named by a field of the object (fromRef with field: and
// names:) is read only when the field names one of the names the rule
// gives: a ConfigMap whose data.settings names team-defaults carries its
// owner and follows it, one naming another ConfigMap, or none, gets the
// default; pointing the field at team-defaults gives it the value.
func TestFromRefConfigMapByField(t *testing.T) {
	ns := env.NewNamespace(t)
	cm := func(name, data string) {
		env.Create(t, h.ConfigMaps, ns, h.FromYAML(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, labels: {app: web}}\ndata: {%s}\n", name, data)))
	}
	cm("team-defaults", "owner: alice")
	cm("unrelated", "owner: mallory")
	cm("web", "settings: team-defaults")
	cm("api", "settings: unrelated")
	cm("bare", "other: x")
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: app-owner
  resources: [configmaps]
  namespaces: [%s]
  selector: app=web
  labels:
    owner: {fromRef: {resource: configmaps, field: data.settings, names: [team-defaults], data: owner}, default: nobody}
`, ns))
	as := grantRBAC(t, rulesFile, ns, "configmaps")
	startRun(t, "--rules", rulesFile, "--as", as, "--record-namespace", ns)
	owner := func(name, want string) {
		t.Helper()
		waitMetadata(t, 30*time.Second, h.ConfigMaps, ns, name, "owner "+want, func(_, l map[string]string) bool { return l["owner"] == want })
	}
	owner("web", "alice")
	owner("api", "nobody") // unrelated is not among the names
	owner("bare", "nobody")
	owner("team-defaults", "nobody")
	userSet(t, h.ConfigMaps, ns, "team-defaults", `{"data":{"owner":"bob"}}`)
	owner("web", "bob")
	userSet(t, h.ConfigMaps, ns, "api", `{"data":{"settings":"team-defaults"}}`)
	owner("api", "bob")
}

// examples/volume-team.yaml, as shipped, on a real control plane: a
// volume carries its claim's team and app.kubernetes.io/* labels and
// follows its relabel, a claim the
// owner in its namespace's team-defaults ConfigMap; diff, which lists the
// claims and that ConfigMap once, then agrees that nothing is left to
// change.
func TestExampleVolumeTeam(t *testing.T) {
	rulesFile := filepath.Join(h.RepoRoot(), "examples", "volume-team.yaml")
	ns := env.NewNamespace(t)
	data := env.Create(t, persistentVolumeClaims, ns, h.FromYAML(t, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, labels: {team: payments, app.kubernetes.io/name: shop}}\n"+
		"spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"))
	env.Create(t, h.ConfigMaps, ns, h.FromYAML(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: team-defaults}\ndata: {owner: Alice Smith}\n"))
	pv := ns + "-example"
	env.Create(t, persistentVolumes, "", h.FromYAML(t, fmt.Sprintf("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s}\n"+
		"spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp/%s}, claimRef: {kind: PersistentVolumeClaim, namespace: %s, name: data, uid: %s}}\n",
		pv, pv, ns, data.GetUID())))
	p := startRun(t, "--rules", rulesFile, "--record-namespace", ns)
	defer p.Terminate(t)
	waitMetadata(t, 30*time.Second, persistentVolumes, "", pv, "team payments, the claim's app name", func(_, l map[string]string) bool {
		return l["team"] == "payments" && l["app.kubernetes.io/name"] == "shop"
	})
	waitMetadata(t, 30*time.Second, persistentVolumeClaims, ns, "data", "owner Alice-Smith, sanitized", func(_, l map[string]string) bool { return l["owner"] == "Alice-Smith" })
	userSet(t, persistentVolumeClaims, ns, "data", `{"metadata":{"labels":{"team":"checkout"}}}`)
	waitMetadata(t, 30*time.Second, persistentVolumes, "", pv, "team checkout", func(_, l map[string]string) bool { return l["team"] == "checkout" })
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff -n %s after convergence: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", ns, code, out, stderr)
	}
}

// A key set copied from the object a field names (copy: fromRef): a
// PersistentVolume carries every label of its claim but those excepted,
// follows a label added, changed and removed at the claim, and keeps a
// label someone else set on it; the controller runs as the identity
// `kube-annotator rbac` grants.
func TestCopyFromRef(t *testing.T) {
	ns := env.NewNamespace(t)
	data := env.Create(t, persistentVolumeClaims, ns, h.FromYAML(t, "apiVersion: v1\nkind: PersistentVolumeClaim\n"+
		"metadata: {name: data, labels: {team: payments, tier: db, internal-id: '7'}}\n"+
		"spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"))
	env.Create(t, persistentVolumes, "", h.FromYAML(t, fmt.Sprintf("apiVersion: v1\nkind: PersistentVolume\n"+
		"metadata: {name: %[1]s-bound, labels: {e2e: %[1]s, tier: mine}}\n"+
		"spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp/bound}, "+
		"claimRef: {kind: PersistentVolumeClaim, namespace: %[1]s, name: data, uid: %[2]s}}\n", ns, data.GetUID())))
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: claim-labels
  resources: [persistentvolumes]
  selector: e2e=%s
  copy:
  - fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, labels: ["*"], except: [internal-*]}
`, ns))
	as := grantRBAC(t, rulesFile, ns, "persistentvolumeclaims", "persistentvolumes")
	startRun(t, "--rules", rulesFile, "--as", as, "--record-namespace", ns)
	labels := func(want map[string]string) {
		t.Helper()
		waitLabels(t, persistentVolumes, "", ns+"-bound", want)
	}
	labels(map[string]string{"team": "payments", "tier": "mine", "internal-id": ""})
	userSet(t, persistentVolumeClaims, ns, "data", `{"metadata":{"labels":{"team":"checkout","zone":"a"}}}`)
	labels(map[string]string{"team": "checkout", "zone": "a", "tier": "mine"})
	userSet(t, persistentVolumeClaims, ns, "data", `{"metadata":{"labels":{"zone":null}}}`)
	labels(map[string]string{"team": "checkout", "zone": "", "tier": "mine"})
}
