package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// fightManager is the field manager of the writer that fights the
// controller.
const fightManager = "fight-e2e"

// reverter is a second writer, or several taking turns, each with a
// field manager of its own: each time it sees none of the writers' keys
// at the writer's value, the writer whose turn it is puts its value back
// (with an update, so that the API server counts the controller's patches
// apart from its writes).
type reverter struct {
	mu      sync.Mutex
	reverts []time.Time
}

// writer is one of a reverter's writers: its field manager, and the
// annotation key it puts its value back on.
type writer struct{ manager, key, value string }

func startReverter(t *testing.T, ns, name, key, value string) *reverter {
	return startReverters(t, ns, name, writer{fightManager, key, value})
}

// startReverters starts a reverter whose writers take turns, in order.
func startReverters(t *testing.T, ns, name string, writers ...writer) *reverter {
	r := &reverter{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A watch that ends, or fails to start, is started again 100 ms later.
		wait.UntilWithContext(ctx, func(ctx context.Context) { r.revert(ctx, ns, name, writers) }, 100*time.Millisecond)
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return r
}

// revert watches ConfigMap name of ns, and puts the value of the writer
// whose turn it is back each time it sees none of the writers' values,
// until the watch ends.
func (r *reverter) revert(ctx context.Context, ns, name string, writers []writer) {
	w, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || slices.ContainsFunc(writers, func(wr writer) bool { return u.GetAnnotations()[wr.key] == wr.value }) {
			continue
		}
		wr := writers[r.count()%len(writers)]
		anns := u.GetAnnotations()
		anns[wr.key] = wr.value
		u.SetAnnotations(anns)
		if _, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).Update(ctx, u, metav1.UpdateOptions{FieldManager: wr.manager}); err == nil {
			r.mu.Lock()
			r.reverts = append(r.reverts, time.Now())
			r.mu.Unlock()
		}
	}
}

func (r *reverter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reverts)
}

// Another writer reverts the key a rule sets each time the controller
// sets it: after more than 3 writes in 60 s the controller reports the
// fight — a log line at the default verbosity, a Warning event and
// metrics naming the rule and the other field manager, shown by explain —
// and its writes to the object back off (1 s, 2 s, 4 s …), so that it
// patches the object a handful of times in 20 s where the loop would
// otherwise run as fast as the two writers can.
func TestFightBacksOff(t *testing.T) {
	ns := env.NewNamespace(t)
	cm := h.Object("v1", "ConfigMap", ns, "web")
	cm.SetAnnotations(map[string]string{"team": "theirs"})
	if _, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{FieldManager: fightManager}); err != nil {
		t.Fatal(err)
	}
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf("rules:\n- name: team\n  resources: [configmaps]\n  namespaces: [%s]\n  annotations: {team: ours}\n", ns))
	rev := startReverter(t, ns, "web", "team", "theirs")
	p := startRun(t, "--rules", rulesFile, "-n", ns, "--events")

	fights := map[string]string{"rule": "team", "manager": fightManager}
	p.WaitSeries(t, 60*time.Second, "kube_annotator_fights_total", fights, 1)
	start, before, revertsBefore := time.Now(), requests(t), rev.count()
	p.WaitSeries(t, 5*time.Second, "kube_annotator_fighting_objects", map[string]string{"resource": "configmaps"}, 1)
	if n := p.LogLines(t, "Another field manager reverts", `manager="`+fightManager+`"`, "team"); n != 1 {
		t.Errorf("%d log lines report the fight, want 1 (at the default verbosity):\n%s", n, p.Output(t))
	}
	wantNote := `Field manager "` + fightManager + `" reverts annotation team (rule team)`
	waitFightEvent(t, ns, "web", wantNote)
	explainShowsFight(t, rulesFile, ns)

	// Backoff: the writes after the fight was found, over 20 s, checked
	// throughout, so that a loop shows as soon as it passes the bound.
	const window = 20 * time.Second
	testutil.Consistently(t, window-time.Since(start), "at most 6 PATCH of the ConfigMap since the fight was found", func() bool {
		return patches(t, before) <= 6
	})
	during := patches(t, before)
	t.Logf("%d reverts before the fight was found; then in %v: %d PATCH of the ConfigMap, %d reverts",
		revertsBefore, window, during, rev.count()-revertsBefore)
	// 1 s, 2 s, 4 s, 8 s after the last write: 4 writes in 20 s (5 at
	// most, the first waits less). Without backoff each revert is answered
	// at once, dozens a second.
	if during > 6 {
		t.Errorf("%d PATCH of the ConfigMap in the %v after the fight was found, want at most 6", during, window)
	}
	if during < 1 {
		t.Errorf("no PATCH in the %v after the fight was found: the controller must keep trying, only slower", window)
	}
}

// waitFightEvent waits for the controller's Fighting event on ConfigMap
// name, with a note that contains want.
func waitFightEvent(t *testing.T, ns, name, want string) {
	t.Helper()
	var notes []string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := env.Dynamic.Resource(events).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		notes = notes[:0]
		for _, e := range list.Items {
			reason, _, _ := unstructured.NestedString(e.Object, "reason")
			regarding, _, _ := unstructured.NestedString(e.Object, "regarding", "name")
			typ, _, _ := unstructured.NestedString(e.Object, "type")
			note, _, _ := unstructured.NestedString(e.Object, "note")
			if reason == "Fighting" && regarding == name && typ == "Warning" {
				notes = append(notes, note)
				if strings.Contains(note, want) {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no Warning Fighting event on %s with a note containing %q: %v; notes %q", name, want, err, notes)
	}
}

// explainShowsFight checks that explain, a process of its own, shows the
// fight over ConfigMap web from the controller's event.
func explainShowsFight(t *testing.T, rulesFile, ns string) {
	t.Helper()
	args := []string{"explain", "configmaps/web", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns}
	out, stderr, code := runCLI(t, append(args, "-o", "json")...)
	var x struct {
		Fight *struct {
			Manager string
			Ongoing bool
			Keys    []struct{ Kind, Key, Rule string }
		}
	}
	if err := json.Unmarshal([]byte(out), &x); code != 0 || err != nil {
		t.Fatalf("explain -o json: exit %d, %v; stderr %s", code, err, stderr)
	}
	if f := x.Fight; f == nil || f.Manager != fightManager || !f.Ongoing || len(f.Keys) != 1 || f.Keys[0].Key != "team" || f.Keys[0].Rule != "team" {
		t.Errorf("explain -o json shows fight %+v, want the one with %s over annotation team (rule team), ongoing:\n%s", x.Fight, fightManager, out)
	}
	text, stderr, code := runCLI(t, args...)
	if want := `field manager "` + fightManager + `" reverts what the rules set`; code != 0 || !strings.Contains(text, want) {
		t.Errorf("explain: exit %d, want %q in:\n%s%s", code, want, text, stderr)
	}
}
