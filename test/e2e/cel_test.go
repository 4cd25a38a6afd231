package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// celRules labels the Deployments of ns big while they have more than two
// replicas, and annotates each with its namespace/name, computed in CEL.
func celRules(ns string) string {
	return fmt.Sprintf(`rules:
- name: big
  resources: [deployments]
  namespaces: [%s]
  when: object.spec.replicas > 2
  labels: {size: big}
- name: id
  resources: [deployments]
  namespaces: [%s]
  annotations:
    example.com/id: {cel: "object.metadata.namespace + '/' + object.metadata.name + '@' + string(object.spec.replicas)"}
`, ns, ns)
}

// A when condition holds the key only while it holds: scaling down makes
// the controller delete the key it set. A cel value follows the object. A
// condition on a key the rules set is refused at load.
func TestCEL(t *testing.T) {
	ns := env.NewNamespace(t)
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "web", 3))
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "small", 1))

	loop := writeFile(t, "loop.yaml", strings.Replace(celRules(ns), "object.spec.replicas > 2", `"!has(object.metadata.labels.size)"`, 1))
	if out, stderr, code := runCLI(t, "check", "--offline", "--rules", loop); code != 1 || !strings.Contains(stderr, "rules[0].when") ||
		!strings.Contains(stderr, "ifAbsent: true") {
		t.Errorf("check --offline of a condition on the key the rule sets: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1 and the condition refused", code, out, stderr)
	}

	rulesFile := writeFile(t, "rules.yaml", celRules(ns))
	p := startRun(t, "--rules", rulesFile)
	waitMetadata(t, 15*time.Second, h.Deployments, ns, "web", "labelled big, id set", func(a, l map[string]string) bool {
		return l["size"] == "big" && a["example.com/id"] == ns+"/web@3"
	})
	waitMetadata(t, 15*time.Second, h.Deployments, ns, "small", "id set, not big", func(a, l map[string]string) bool {
		return !hasKey(l, "size") && a["example.com/id"] == ns+"/small@1"
	})
	userSet(t, h.Deployments, ns, "web", `{"spec":{"replicas":1}}`)
	waitMetadata(t, 15*time.Second, h.Deployments, ns, "web", "no longer big, id follows", func(a, l map[string]string) bool {
		return !hasKey(l, "size") && a["example.com/id"] == ns+"/web@1"
	})
	userSet(t, h.Deployments, ns, "small", `{"spec":{"replicas":4}}`)
	waitMetadata(t, 15*time.Second, h.Deployments, ns, "small", "big now", func(a, l map[string]string) bool {
		return l["size"] == "big" && a["example.com/id"] == ns+"/small@4"
	})
	p.Terminate(t)

	t.Run("admission", func(t *testing.T) { testCELAdmission(t) })
}

// With run --admission-policies, the condition and the value are
// evaluated at creation. Without MutatingAdmissionPolicy v1 (1.35), the
// create response carries neither, and the controller sets both right
// after creation.
func testCELAdmission(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", celRules(ns)+probeRule(ns))
	degraded := startAdmission(t, ns, rulesFile)
	for _, d := range []struct {
		name             string
		replicas         int
		wantSize, wantID string
	}{
		{"big", 3, "big", ns + "/big@3"},
		{"one", 1, "", ns + "/one@1"},
	} {
		got := env.Create(t, h.Deployments, ns, h.Deployment(t, ns, d.name, d.replicas))
		checkCreated(t, degraded, got, map[string]string{"example.com/id": d.wantID}, map[string]string{"size": d.wantSize})
		waitMetadata(t, 10*time.Second, h.Deployments, ns, d.name, "size "+d.wantSize+", id "+d.wantID, func(a, l map[string]string) bool {
			return l["size"] == d.wantSize && a["example.com/id"] == d.wantID
		})
	}
}
