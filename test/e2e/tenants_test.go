package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// Two tenants and an admin, as a real cluster has them: the controller
// runs as the ServiceAccount `rbac` grants, each tenant is a user who may
// only edit its own namespace. Tenant A's rules label A's Pods and nothing
// of B's; its key outside the allowlist is refused, with the reason on its
// ConfigMap (status annotation and Event), while its file's other rules
// apply — the Capsule case: myorg.net/foo set on its Namespace,
// evil.example/bypass refused; a malformed edit keeps the rules last read;
// a namespace the selector does not admit gets nothing; deleting A's
// ConfigMap prunes exactly the keys A's rules set; a file of 10,000 rules
// is refused whole, and nobody else's rules change.
func TestTenants(t *testing.T) {
	nsA, nsB, nsC, saNS := env.NewNamespace(t), env.NewNamespace(t), env.NewNamespace(t), env.NewNamespace(t)
	selector := "e2e-tenants-" + saNS
	for _, ns := range []string{nsA, nsB} {
		if out, err := kubectl(t, "", "label", "namespace", ns, selector+"=yes"); err != nil {
			t.Fatalf("label %s: %v\n%s", ns, err, out)
		}
	}
	users := map[string]string{nsA: "tenant-a-" + saNS, nsB: "tenant-b-" + saNS, nsC: "tenant-c-" + saNS}
	for ns, user := range users {
		tenantUser(t, ns, user)
		env.Create(t, h.Pods, ns, h.Pod(t, ns, "web"))
	}
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`tenants:
  configMap: %[5]s
  namespaceSelector: %[4]s=yes
  resources: [pods, namespaces]
  keys: {labels: ["myorg.net/*", team]}
rules:
- name: managed
  resources: [pods]
  namespaces: [%[1]s, %[2]s, %[3]s]
  labels: {e2e-managed: "true"}
`, nsA, nsB, nsC, selector, tenantConfigMap))
	name := "ka-" + saNS
	sa := runAsRBAC(t, rulesFile, saNS, name)
	p := startRun(t, "--rules", rulesFile, "--as", sa, "--field-manager", name, "--record-namespace", saNS)

	putTenantRules(t, nsA, users[nsA], tenantAFile)
	putTenantRules(t, nsB, users[nsB], "rules:\n- name: team\n  resources: [pods]\n  labels: {team: b}\n")
	putTenantRules(t, nsC, users[nsC], "rules:\n- name: team\n  resources: [pods]\n  labels: {team: c}\n")

	waitLabels(t, h.Pods, nsA, "web", map[string]string{"team": "a", "e2e-managed": "true"})
	waitLabels(t, h.Pods, nsB, "web", map[string]string{"team": "b", "e2e-managed": "true"})
	waitLabels(t, h.Namespaces, "", nsA, map[string]string{"myorg.net/foo": "yes", "evil.example/bypass": ""})
	status := waitTenantStatus(t, nsA, "2 of 3 rules in force", `rules[2].labels.evil.example/bypass: label key "evil.example/bypass" matches none of tenants.keys.labels`)
	if !strings.Contains(status, "line 10:") {
		t.Errorf("the status does not name the refused key's line:\n%s", status)
	}
	waitFor(t, 30*time.Second, "a Warning Event on A's ConfigMap", func() bool { return refusalEvents(t, nsA) > 0 })
	waitTenantStatus(t, nsB, "1 of 1 rules in force")
	p.WaitSeries(t, 30*time.Second, "kube_annotator_tenant_rules", map[string]string{"namespace": nsA, "state": "refused"}, 1)
	testutil.Consistently(t, 2*time.Second, "nothing in the namespace the selector does not admit, no tenant's key on another's objects", func() bool {
		_, lc := metadataOf(t, h.Pods, nsC, "web")
		_, lb := metadataOf(t, h.Namespaces, "", nsB)
		return !hasKey(lc, "team") && lc["e2e-managed"] == "true" && !hasKey(lb, "myorg.net/foo")
	})
	if _, ok := env.Get(t, h.ConfigMaps, nsC, tenantConfigMap).GetAnnotations()[tenantStatus]; ok {
		t.Errorf("the ConfigMap in %s, whose namespace the selector does not admit, got a status", nsC)
	}

	// A malformed edit keeps the rules last read, and says so.
	putTenantRules(t, nsA, users[nsA], "rules: [{name: team, resources: [pods]")
	waitTenantStatus(t, nsA, "cannot be read, so the rules last read stay in force", "2 of 3 rules in force")
	testutil.Consistently(t, 2*time.Second, "A's keys kept through its malformed edit", func() bool {
		_, l := metadataOf(t, h.Pods, nsA, "web")
		return l["team"] == "a"
	})

	// Deleting A's ConfigMap prunes exactly the keys A's rules set.
	if out, err := kubectl(t, "", "--as", users[nsA], "-n", nsA, "delete", "configmap", tenantConfigMap); err != nil {
		t.Fatalf("%s deleting its rules: %v\n%s", users[nsA], err, out)
	}
	waitLabels(t, h.Pods, nsA, "web", map[string]string{"team": "", "e2e-managed": "true"})
	waitLabels(t, h.Namespaces, "", nsA, map[string]string{"myorg.net/foo": ""})
	waitLabels(t, h.Pods, nsB, "web", map[string]string{"team": "b"})

	// A file of 10,000 rules is refused whole; B's rules stay.
	var b strings.Builder
	b.WriteString("rules:\n")
	for i := range 10_000 {
		fmt.Fprintf(&b, "- {name: r%d, resources: [pods], labels: {team: x}}\n", i)
	}
	putTenantRules(t, nsA, users[nsA], b.String())
	waitTenantStatus(t, nsA, "no rule in force", "10000 rules")
	testutil.Consistently(t, 2*time.Second, "no rule of the refused file in force, B's rules kept", func() bool {
		_, la := metadataOf(t, h.Pods, nsA, "web")
		_, lb := metadataOf(t, h.Pods, nsB, "web")
		return !hasKey(la, "team") && lb["team"] == "b"
	})
	if log := p.Output(t); strings.Contains(log, "forbidden") {
		t.Errorf("the controller was refused something as %s:\n%s", sa, log)
	}
}
