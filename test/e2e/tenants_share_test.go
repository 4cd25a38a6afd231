package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// A tenant's share: tenant A's new file, which would change 40 objects,
// more than maxChanges 30, is held (its status says so and how to confirm
// it, nothing is written); A confirms it with the digest the status gives;
// its 40 writes then go at writesPerSecond 2, and meanwhile tenant B's
// edit of its own rule is written at once: A's backlog never holds B back.
func TestTenantFairShare(t *testing.T) {
	nsA, nsB, saNS := env.NewNamespace(t), env.NewNamespace(t), env.NewNamespace(t)
	users := map[string]string{nsA: "tenant-a-" + saNS, nsB: "tenant-b-" + saNS}
	for ns, user := range users {
		tenantUser(t, ns, user)
	}
	const items = 40
	for i := range items {
		env.Create(t, h.ConfigMaps, nsA, h.Object("v1", "ConfigMap", nsA, fmt.Sprintf("item-%d", i)))
	}
	env.Create(t, h.ConfigMaps, nsB, h.Object("v1", "ConfigMap", nsB, "item-0"))
	rulesFile := writeFile(t, "rules.yaml", `tenants:
  resources: [configmaps]
  keys: {labels: [team]}
  writesPerSecond: 2
  maxChanges: 30
rules: []
`)
	name := "ka-" + saNS
	sa := runAsRBAC(t, rulesFile, saNS, name)
	p := startRun(t, "--rules", rulesFile, "--as", sa, "--field-manager", name, "--record-namespace", saNS)

	teamRule := func(team string) string {
		return fmt.Sprintf("rules:\n- name: team\n  resources: [configmaps]\n  names: [\"item-*\"]\n  labels: {team: %s}\n", team)
	}
	putTenantRules(t, nsB, users[nsB], teamRule("b"))
	waitLabels(t, h.ConfigMaps, nsB, "item-0", map[string]string{"team": "b"})

	putTenantRules(t, nsA, users[nsA], teamRule("a"))
	status := waitTenantStatus(t, nsA, "held: the new file's 1 rules would change 40 objects in this namespace, more than tenants.maxChanges 30")
	p.WaitSeries(t, 30*time.Second, "kube_annotator_tenant_rules", map[string]string{"namespace": nsA, "state": "held"}, 1)
	// The status stays: the controller, whose tenants' rules name
	// ConfigMaps, does not take it for a key of its own to prune.
	testutil.Consistently(t, 2*time.Second, "nothing of A's held file written, its status kept", func() bool {
		return labelled(t, nsA, "team=a") == 0 && env.Get(t, h.ConfigMaps, nsA, tenantConfigMap).GetAnnotations()[tenantStatus] == status
	})
	if n := tenantEvents(t, nsA, "TenantRulesHeld"); n == 0 {
		t.Error("no Warning Event TenantRulesHeld on A's ConfigMap")
	}
	digest := regexp.MustCompile(`kube-annotator.io/confirm-rules=([0-9a-f]{12})`).FindStringSubmatch(status)
	if digest == nil {
		t.Fatalf("the status does not say how to confirm the file:\n%s", status)
	}
	if out, err := kubectl(t, "", "--as", users[nsA], "-n", nsA, "annotate", "configmap", tenantConfigMap, "kube-annotator.io/confirm-rules="+digest[1]); err != nil {
		t.Fatalf("%s confirming its file: %v\n%s", users[nsA], err, out)
	}
	waitTenantStatus(t, nsA, "1 of 1 rules in force")
	waitFor(t, 30*time.Second, "A's first paced writes", func() bool { return labelled(t, nsA, "team=a") > 0 })

	putTenantRules(t, nsB, users[nsB], teamRule("b2"))
	waitLabels(t, h.ConfigMaps, nsB, "item-0", map[string]string{"team": "b2"})
	if n := labelled(t, nsA, "team=a"); n >= items {
		t.Errorf("all %d of A's objects were written before B's one edit: A's writes were not paced", n)
	}
	waitFor(t, 90*time.Second, "all of A's objects written at its pace", func() bool { return labelled(t, nsA, "team=a") == items })
	body, err := p.ReadMetrics()
	if err != nil {
		t.Fatal(err)
	}
	if n := promtext.MetricValue(body, "kube_annotator_tenant_writes_paced_total", map[string]string{"namespace": nsA}); n == 0 {
		t.Error("kube_annotator_tenant_writes_paced_total counts no paced write of A")
	}
	if log := p.Output(t); strings.Contains(log, "forbidden") {
		t.Errorf("the controller was refused something as %s:\n%s", sa, log)
	}
}

// labelled counts the ConfigMaps of ns that selector selects.
func labelled(t *testing.T, ns, selector string) int {
	t.Helper()
	list, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// tenantEvents counts the Warning Events of reason about ns's rules
// ConfigMap.
func tenantEvents(t *testing.T, ns, reason string) int {
	t.Helper()
	list, err := env.Dynamic.Resource(eventsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		r, _, _ := unstructured.NestedString(e.Object, "reason")
		name, _, _ := unstructured.NestedString(e.Object, "regarding", "name")
		if r == reason && name == tenantConfigMap {
			n++
		}
	}
	return n
}
