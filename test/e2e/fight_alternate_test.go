package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// Two other field managers take turns reverting keys one rule sets: A
// puts annotation team back, then B annotation tier, then A again … so
// that no two writes of the controller in a row make the same change.
// The fight is found all the same (each key is set to one value again
// and again), reported naming both managers — a log line, a Warning
// event, kube_annotator_fights_total once for each — and the
// controller's writes back off.
func TestFightTwoManagersInTurn(t *testing.T) {
	ns, rulesFile := fightInTurn(t)
	p := startRun(t, "--rules", rulesFile, "-n", ns, "--events")

	for _, m := range []string{"fight-a", "fight-b"} {
		p.WaitSeries(t, 60*time.Second, "kube_annotator_fights_total", map[string]string{"rule": "team", "manager": m}, 1)
	}
	p.WaitSeries(t, 5*time.Second, "kube_annotator_fighting_objects", map[string]string{"resource": "configmaps"}, 1)
	if n := p.LogLines(t, "Another field manager reverts", `managers=["fight-`, `","fight-`); n < 1 {
		t.Errorf("no log line reports the fight naming both managers:\n%s", p.Output(t))
	}
	waitFightEvent(t, ns, "web", `Field managers "fight-`)
	out, stderr, code := runCLI(t, "explain", "configmaps/web", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns, "-o", "json")
	var x struct{ Fight *struct{ Managers []string } }
	if err := json.Unmarshal([]byte(out), &x); code != 0 || err != nil || x.Fight == nil ||
		!slices.Contains(x.Fight.Managers, "fight-a") || !slices.Contains(x.Fight.Managers, "fight-b") {
		t.Errorf("explain -o json: exit %d, %v, want a fight naming fight-a and fight-b:\n%s%s", code, err, out, stderr)
	}
	assertBacksOff(t, 3)
}

// The controller restarts in the middle of such a fight: what the
// detector knew is lost (docs/faults.md), so the new process writes at
// full rate until it finds the fight again — at most Writes+1 writes of
// a key, here a handful of PATCH — and then backs off again.
func TestFightRestart(t *testing.T) {
	ns, rulesFile := fightInTurn(t)
	args := []string{"--rules", rulesFile, "-n", ns, "--events"}
	p := startRun(t, args...)
	p.WaitSeries(t, 60*time.Second, "kube_annotator_fighting_objects", map[string]string{"resource": "configmaps"}, 1)
	p.Terminate(t)

	before := requests(t)
	p = startRun(t, args...)
	p.WaitSeries(t, 60*time.Second, "kube_annotator_fighting_objects", map[string]string{"resource": "configmaps"}, 1)
	// Each key is counted from the new process's third write: at most
	// 2 + 2×(Writes+1) writes until the fight is found again.
	n := patches(t, before)
	t.Logf("%d PATCH of the ConfigMap after the restart until the fight was found again", n)
	if n > 12 {
		t.Errorf("%d PATCH of the ConfigMap after the restart before the fight was found again, want at most 12", n)
	}
	assertBacksOff(t, 3)
}

// fightInTurn makes ConfigMap web in a namespace of its own, a rule that
// sets annotations team and tier on it, and two writers that revert
// them in turn (fight-a team, fight-b tier); it returns the namespace
// and the rules file.
func fightInTurn(t *testing.T) (ns, rulesFile string) {
	t.Helper()
	ns = env.NewNamespace(t)
	cm := h.Object("v1", "ConfigMap", ns, "web")
	cm.SetAnnotations(map[string]string{"team": "a", "tier": "b"})
	if _, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{FieldManager: "fight-a"}); err != nil {
		t.Fatal(err)
	}
	rulesFile = writeFile(t, "rules.yaml", fmt.Sprintf("rules:\n- name: team\n  resources: [configmaps]\n  namespaces: [%s]\n  annotations: {team: ours, tier: web}\n", ns))
	startReverters(t, ns, "web", writer{"fight-a", "team", "a"}, writer{"fight-b", "tier", "b"})
	return ns, rulesFile
}

// assertBacksOff waits for the controller's next n PATCH of the
// ConfigMaps and checks they took as long as the backoff makes them:
// waits of at least 1 s, 2 s, 4 s … between them (the first may wait
// less), where without it they go out as fast as the writers revert.
func assertBacksOff(t *testing.T, n int) {
	t.Helper()
	start, before := time.Now(), requests(t)
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		return patches(t, before) >= n, nil
	})
	if err != nil {
		t.Fatalf("%d PATCH of the ConfigMap in 90s, want %d: the controller must keep trying, only slower", patches(t, before), n)
	}
	// 1+2 s between 3 writes at least; allow the first to go at once.
	min := time.Duration(1<<(n-2)) * time.Second
	if took := time.Since(start); took < min {
		t.Errorf("%d PATCH of the ConfigMap in %v, want them to take at least %v: the writes do not back off", n, took, min)
	}
}
