package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// The opt-out can be locked: deploy/optout-lock.yaml lets only the
// controller and cluster admins set or remove kube-annotator.io/ignore (a
// user with every RBAC right but not in an allowed group is refused), and
// a rule with allowOptOut: false still applies to an object that opts out,
// while the other rules leave it alone.
func TestOptOutLock(t *testing.T) {
	ns := env.NewNamespace(t)
	user := "optout-" + ns
	applyOptOutLock(t, ns, user)
	configMapsNamed(t, ns, "locked", "free")
	if out, err := kubectl(t, "", "--as", user, "-n", ns, "annotate", "configmap", "free", ignoreKey+"=true"); err == nil ||
		!strings.Contains(err.Error(), lockRefusal) {
		t.Fatalf("%s setting the opt-out annotation: got %v (%s), want a refusal by the policy", user, err, out)
	}
	// Other annotations stay the user's to change.
	if out, err := kubectl(t, "", "--as", user, "-n", ns, "annotate", "configmap", "free", "note=x"); err != nil {
		t.Errorf("%s setting another annotation: %v\n%s", user, err, out)
	}
	// A cluster admin may opt out (and the controller's ServiceAccount).
	for _, name := range []string{"locked", "free"} {
		if out, err := kubectl(t, "", "-n", ns, "annotate", "configmap", name, "kube-annotator.io/ignore=true"); err != nil {
			t.Fatalf("an admin opting %s out: %v\n%s", name, err, out)
		}
	}
	if out, err := kubectl(t, "", "--as", user, "-n", ns, "annotate", "configmap", "free", "kube-annotator.io/ignore-"); err == nil {
		t.Errorf("%s removed the opt-out annotation: %s", user, out)
	}

	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: psa
  resources: [configmaps]
  namespaces: [%[1]s]
  names: [locked]
  allowOptOut: false
  labels: {psa: baseline}
- name: team
  resources: [configmaps]
  namespaces: [%[1]s]
  annotations: {team: a}
`, ns))
	startRun(t, "--rules", rulesFile)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "locked", "the locked rule's label set", func(_, l map[string]string) bool {
		return l["psa"] == "baseline"
	})
	// A wrong write would follow the right one: none may show in 2 s.
	testutil.Consistently(t, 2*time.Second, "no other rule's key on the objects that opt out", func() bool {
		for _, name := range []string{"locked", "free"} {
			if a, l := metadataOf(t, h.ConfigMaps, ns, name); hasKey(a, "team") || (name == "free" && hasKey(l, "psa")) {
				t.Errorf("%s opts out, but the controller wrote another rule's key: annotations %v, labels %v", name, a, l)
				return false
			}
		}
		return true
	})
}
