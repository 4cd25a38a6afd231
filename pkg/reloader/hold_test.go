package reloader

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/tenants"
)

const heldFile = `tenants:
  resources: [configmaps]
  keys: {labels: ["team"]}
  maxChanges: 50
  writesPerSecond: 7
rules:
- name: admin
  resources: [configmaps]
  labels: {managed: "true"}
`

// changedByBig stands in for the controller's count: a tenant's rule
// named "big" changes 100 objects of its namespace, any other rule 10.
func changedByBig(before, set *rules.Set, namespaces []string) map[string]int {
	out := map[string]int{}
	for _, ns := range namespaces {
		for _, name := range ruleNames(set) {
			if strings.HasPrefix(name, ns+"/") && !slices.Contains(ruleNames(before), name) {
				out[ns] += map[bool]int{true: 100, false: 10}[name == ns+"/big"]
			}
		}
	}
	return out
}

// A tenant's new file that would change more objects than maxChanges is
// held, the rules before it in force, until the tenant confirms it with
// its digest; a file under the limit goes in force at once, and the
// writes are paced at writesPerSecond for the tenants with rules.
func TestTenantsHeld(t *testing.T) {
	ft := newFakeTenants()
	var mu sync.Mutex
	var paced []string
	pace := func(perSecond int, namespaces []string) {
		mu.Lock()
		defer mu.Unlock()
		paced = append(paced, fmt.Sprint(perSecond, namespaces))
	}
	h := start(t, heldFile, Options{Tenants: ft, Changed: changedByBig, Pace: pace})

	small := "rules:\n- name: small\n  resources: [configmaps]\n  labels: {team: a}\n"
	ft.put("team-a", small)
	if got := ruleNames(h.waitApply()); !slices.Equal(got, []string{"admin", "team-a/small"}) {
		t.Fatalf("rules in force %v, want the tenant's small change in force at once", got)
	}
	big := small + "- name: big\n  resources: [configmaps]\n  labels: {team: b}\n  names: [b]\n"
	ft.put("team-a", big)
	h.waitFor("the hold reported", func() bool {
		return strings.Contains(ft.lastStatus("team-a"), "held: the new file's 2 rules would change 100 objects")
	})
	status := ft.lastStatus("team-a")
	if got := ruleNames(h.r.Set()); !slices.Equal(got, []string{"admin", "team-a/small"}) {
		t.Errorf("rules in force while held %v, want those before the held file", got)
	}
	digest := regexp.MustCompile(tenants.ConfirmAnnotation + `=([0-9a-f]{12})`).FindStringSubmatch(status)
	if digest == nil || digest[1] != tenants.Digest(tenants.File{Data: []byte(big)}) {
		t.Fatalf("status %q does not give the file's digest to confirm it", status)
	}

	ft.confirm["team-a"] = digest[1]
	ft.put("team-a", big)
	if got := ruleNames(h.waitApply()); !slices.Equal(got, []string{"admin", "team-a/small", "team-a/big"}) {
		t.Errorf("rules in force once confirmed %v, want the held file's", got)
	}
	h.waitFor("the status without the hold", func() bool { return strings.HasPrefix(ft.lastStatus("team-a"), "2 of 2 rules in force") })

	mu.Lock()
	defer mu.Unlock()
	if last := paced[len(paced)-1]; last != "7 [team-a]" {
		t.Errorf("last pace %q, want writesPerSecond 7 for team-a", last)
	}
}
