package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// A tenant checks its own rules file, as the user a real cluster makes
// it, with `check --tenant NS`: the file is read from its ConfigMap, and
// what is refused is printed as the controller would write it on the
// ConfigMap, with its line and the limit, exit status 1; a file wholly in
// force exits 0; --tenant-file checks a file not yet put there; a
// namespace without the ConfigMap, or one the selector does not admit,
// is said to be so. It writes nothing.
func TestCheckTenant(t *testing.T) {
	nsA, nsC := env.NewNamespace(t), env.NewNamespace(t)
	selector := "e2e-check-tenant-" + nsA
	if out, err := kubectl(t, "", "label", "namespace", nsA, selector+"=yes"); err != nil {
		t.Fatalf("label %s: %v\n%s", nsA, err, out)
	}
	users := map[string]string{nsA: "tenant-a-" + nsA, nsC: "tenant-c-" + nsC}
	for ns, user := range users {
		tenantUser(t, ns, user)
	}
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`tenants:
  configMap: %s
  namespaceSelector: %s=yes
  resources: [pods, namespaces]
  keys: {labels: ["myorg.net/*", team]}
rules:
- name: managed
  resources: [pods]
  labels: {e2e-managed: "true"}
`, tenantConfigMap, selector))
	checkAs := func(ns string, args ...string) (string, string, int) {
		t.Helper()
		return runCLIReadOnly(t, append([]string{"check", "--rules", rulesFile, "--tenant", ns, "--kubeconfig", env.Kubeconfig, "--as", users[ns]}, args...)...)
	}

	refused := tenantAFile
	putTenantRules(t, nsA, users[nsA], refused)
	stdout, stderr, code := checkAs(nsA)
	want := "2 of 3 rules in force; refused:\n" +
		`line 10: rules[2].labels.evil.example/bypass: label key "evil.example/bypass" matches none of tenants.keys.labels (myorg.net/*, team)` + "\n"
	if code != 1 || stdout != want {
		t.Errorf("check --tenant %s, a key refused: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1 and:\n%s", nsA, code, stdout, stderr, want)
	}

	putTenantRules(t, nsA, users[nsA], "rules:\n- name: team\n  resources: [pods]\n  labels: {team: a}\n")
	if stdout, stderr, code := checkAs(nsA); code != 0 || stdout != "1 of 1 rules in force\n" {
		t.Errorf("check --tenant %s, every rule allowed: exit %d, stdout %q, stderr:\n%s\nwant exit 0", nsA, code, stdout, stderr)
	}

	tenantFile := writeFile(t, "tenant.yaml", refused)
	if stdout, stderr, code := checkAs(nsA, "--tenant-file", tenantFile); code != 1 || stdout != want {
		t.Errorf("check --tenant %s --tenant-file: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1 and:\n%s", nsA, code, stdout, stderr, want)
	}

	if out, err := kubectl(t, "", "--as", users[nsA], "-n", nsA, "delete", "configmap", tenantConfigMap); err != nil {
		t.Fatalf("%s deleting its rules: %v\n%s", users[nsA], err, out)
	}
	stdout, stderr, code = checkAs(nsA)
	if code != 1 || stdout != fmt.Sprintf("no configmap %s/%s: the tenant's rules file goes there, under the key \"rules.yaml\" of its data\n", nsA, tenantConfigMap) {
		t.Errorf("check --tenant %s, no ConfigMap: exit %d, stdout:\n%s\nstderr:\n%s", nsA, code, stdout, stderr)
	}

	putTenantRules(t, nsC, users[nsC], "rules:\n- name: team\n  resources: [pods]\n  labels: {team: c}\n")
	stdout, stderr, code = checkAs(nsC)
	if code != 1 || !strings.HasPrefix(stdout, fmt.Sprintf("namespace %s is not one tenants.namespaceSelector (%s=yes) admits: the controller reads no rules file there\n", nsC, selector)) {
		t.Errorf("check --tenant %s, a namespace not admitted: exit %d, stdout:\n%s\nstderr:\n%s", nsC, code, stdout, stderr)
	}
}
