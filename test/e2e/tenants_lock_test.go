package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// The research case (projectcapsule/capsule#407): a tenant may set
// myorg.net/foo on its Namespace, never evil.example/bypass, never
// pod-security.kubernetes.io/enforce. The tenant's rule sets the first;
// the second is refused with its reason on the tenant's ConfigMap; the
// admin's rule marked locked has `admission` print a
// ValidatingAdmissionPolicy that denies the tenant setting the third,
// naming the rule, while the controller's ServiceAccount and the admin
// group the rule names may: nothing is reverted after the fact.
func TestTenantLockedKeys(t *testing.T) {
	ns, saNS := env.NewNamespace(t), env.NewNamespace(t)
	tenant, admin, adminGroup := "tenant-"+ns, "admin-"+ns, "platform-admins-"+ns
	tenantUser(t, ns, tenant)
	env.GrantClusterAdmin(t, admin)
	name := "ka-" + saNS
	sa := "system:serviceaccount:" + saNS + ":" + name
	const enforce = "pod-security.kubernetes.io/enforce"
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`tenants:
  configMap: %[4]s
  namespaceSelector: kubernetes.io/metadata.name=%[1]s
  resources: [namespaces]
  keys: {labels: ["myorg.net/*"]}
rules:
- name: psa
  resources: [namespaces]
  namespaces: [%[1]s]
  locked: {users: ["%[2]s"], groups: [%[3]s]}
  labels: {%[5]s: baseline}
`, ns, sa, adminGroup, tenantConfigMap, enforce))

	policies, stderr, code := runCLI(t, "admission", "--rules", rulesFile, "--field-manager", name, "--kubeconfig", env.Kubeconfig)
	if code != 0 || !strings.Contains(policies, "kind: ValidatingAdmissionPolicy\n") {
		t.Fatalf("admission: exit %d, want the lock's policy:\n%s%s", code, policies, stderr)
	}
	if !env.Features.MutatingAdmissionPolicyV1 { // the locks alone, which every supported version serves
		policies = validatingOnly(policies)
	}
	if out, err := kubectl(t, policies, "apply", "-f", "-"); err != nil {
		t.Fatalf("apply the admission policies: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = kubectl(t, policies, "delete", "--ignore-not-found", "-f", "-") })
	denial := "rule psa locks label " + enforce
	// A server-side dry run goes through admission and changes nothing:
	// it probes the lock until the API server enforces it.
	waitFor(t, 30*time.Second, "the lock in force", func() bool {
		_, err := kubectl(t, "", "--as", tenant, "label", "namespace", ns, "--dry-run=server", enforce+"=privileged")
		return err != nil && strings.Contains(err.Error(), denial)
	})

	manifests, stderr, code := runCLI(t, "rbac", "--rules", rulesFile, "-n", saNS, "--name", name, "--field-manager", name, "--kubeconfig", env.Kubeconfig)
	if code != 0 {
		t.Fatalf("rbac: exit %d: %s", code, stderr)
	}
	if out, err := kubectl(t, manifests, "apply", "-f", "-"); err != nil {
		t.Fatalf("apply rbac: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = kubectl(t, manifests, "delete", "-f", "-") })
	startRun(t, "--rules", rulesFile, "--as", sa, "--field-manager", name, "--record-namespace", saNS)
	waitLabels(t, h.Namespaces, "", ns, map[string]string{enforce: "baseline"}) // the controller may

	putTenantRules(t, ns, tenant, `rules:
- name: foo
  resources: [namespaces]
  labels: {myorg.net/foo: "yes"}
- name: bypass
  resources: [namespaces]
  labels: {evil.example/bypass: "1"}
`)
	waitLabels(t, h.Namespaces, "", ns, map[string]string{"myorg.net/foo": "yes", "evil.example/bypass": ""})
	waitTenantStatus(t, ns, "1 of 2 rules in force", `label key "evil.example/bypass" matches none of tenants.keys.labels (myorg.net/*)`)

	out, err := kubectl(t, "", "--as", tenant, "label", "namespace", ns, "--overwrite", enforce+"=privileged")
	if err == nil || !strings.Contains(err.Error(), denial) {
		t.Errorf("the tenant setting %s: %v (%s), want a denial naming rule psa", enforce, err, out)
	}
	if out, err := kubectl(t, "", "--as", tenant, "label", "namespace", ns, enforce+"-"); err == nil || !strings.Contains(err.Error(), denial) {
		t.Errorf("the tenant removing %s: %v (%s), want a denial naming rule psa", enforce, err, out)
	}
	if _, l := metadataOf(t, h.Namespaces, "", ns); l[enforce] != "baseline" {
		t.Errorf("%s is %q after the tenant's denied writes, want baseline: nothing to revert", enforce, l[enforce])
	}
	// A member of the group the rule names may; a user bound to
	// cluster-admin but in no group the rule names may not.
	if out, err := kubectl(t, "", "--as", admin, "--as-group", adminGroup, "label", "namespace", ns, "--overwrite", enforce+"=restricted"); err != nil {
		t.Errorf("a member of %s setting %s: %v\n%s", adminGroup, enforce, err, out)
	}
	if out, err := kubectl(t, "", "--as", admin, "label", "namespace", ns, "--overwrite", "--dry-run=server", enforce+"=privileged"); err == nil {
		t.Errorf("%s, bound to cluster-admin but in no group the rule names, set %s: %s", admin, enforce, out)
	}
}

// validatingOnly returns the ValidatingAdmissionPolicies and their
// bindings of a YAML stream, without the MutatingAdmissionPolicies.
func validatingOnly(stream string) string {
	var out []string
	for _, doc := range strings.Split(stream, "---\n") {
		if strings.Contains(doc, "kind: ValidatingAdmissionPolicy") {
			out = append(out, doc)
		}
	}
	return strings.Join(out, "---\n")
}
