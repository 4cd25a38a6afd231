package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/fight"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
)

// Another field manager reverts the key after each write: three writes go
// out, the fourth within the window is held back — nothing is sent, the
// object is queued again after the wait — and the fight is reported once,
// naming the rule and the manager that owns the key on the server.
func TestSyncHandlerHoldsAFight(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	x := Key{configMaps, "ns", "x"}
	onServer := fixture.WithOwned(fixture.ConfigMap("ns", "x", map[string]string{"a": "theirs"}), "gitops", "a")
	client := newClient(onServer)
	rv := 1
	client.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		rv++
		u := fixture.ConfigMap("ns", "x", map[string]string{"a": "1"})
		u.SetResourceVersion(fmt.Sprint(rv))
		return true, u, nil
	})
	recorder, m := events.NewFakeRecorder(20), metrics.New()
	c := withCache(t, client, Options{Recorder: recorder, Metrics: m},
		fixture.Compile(t, "rules:\n- {name: team, resources: [configmaps], annotations: {a: '1'}}\n"))
	// The detector's clock stands still: however slow the syncs, the
	// fourth comes within the wait.
	c.fights = newFights(clocktesting.NewFakePassiveClock(time.Now()), m)
	store := informerOf(c, configMaps).Informer.GetStore()
	for i := range 4 {
		// The cache sees the other manager's revert of our last write.
		u := fixture.ConfigMap("ns", "x", map[string]string{"a": "theirs"})
		u.SetResourceVersion(fmt.Sprint(rv + 100))
		rv += 100
		if err := store.Update(u); err != nil {
			t.Fatal(err)
		}
		if err := c.syncHandler(ctx, x); err != nil {
			t.Fatalf("sync %d: %v", i+1, err)
		}
	}
	if n := len(patches(client)); n != fight.Writes {
		t.Errorf("%d patches, want %d: the fourth within %v is held back", n, fight.Writes, fight.Window)
	}
	if n := verbs(client)["get"]; n != 1 {
		t.Errorf("%d GET requests, want 1: the managedFields of the fight reported", n)
	}
	evs := slices.DeleteFunc(drain(recorder.Events), func(e string) bool { return strings.Contains(e, "Annotated") })
	want := `Warning Fighting Field manager "gitops" reverts annotation a (rule team): more than 3 writes in 1m0s; the writes back off, the next waits `
	if len(evs) != 1 || !strings.HasPrefix(evs[0], want) {
		t.Errorf("events %q, want one starting %q", evs, want)
	}
	if got := value(t, m.Fight.Fights.WithLabelValues("team", "gitops")); got != 1 {
		t.Errorf("fights_total{rule=team,manager=gitops} = %v, want 1", got)
	}
	if got := value(t, m.Fight.Fighting.WithLabelValues("configmaps")); got != 1 {
		t.Errorf("fighting_objects{resource=configmaps} = %v, want 1", got)
	}
	c.initRules(c.set)                 // as SetRules does
	m.PerRule.Coverage.SetSynced(true) // as watchSynced does once the caches have synced
	if got := coverageState(t, m, "fighting"); got != 1 {
		t.Errorf("rule_coverage_objects{rule=team,state=fighting} = %v, want 1: the held write's key", got)
	}
	if c.queue.Len() != 0 {
		t.Errorf("queue holds %d keys at once, want the key to wait", c.queue.Len())
	}
	q, _ := c.queue.Get() // after the wait, at most a second
	if q.key() != x {
		t.Errorf("queued %v after the wait, want %v", q.key(), x)
	}
	c.queue.Done(q)

	// Deleted: the fight ends.
	if err := store.Delete(onServer); err != nil {
		t.Fatal(err)
	}
	if err := c.syncHandler(ctx, x); err != nil {
		t.Fatal(err)
	}
	if got := value(t, m.Fight.Fighting.WithLabelValues("configmaps")); got != 0 {
		t.Errorf("fighting_objects{resource=configmaps} = %v after the object is deleted, want 0", got)
	}
	if got := coverageState(t, m, "fighting"); got != 0 {
		t.Errorf("rule_coverage_objects{rule=team,state=fighting} = %v after the object is deleted, want 0", got)
	}
}

// coverageState reads kube_annotator_rule_coverage_objects of rule team's
// annotation a in state; 0 when it is absent.
func coverageState(t *testing.T, m *metrics.Metrics, state string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range s.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if f.GetName() == "kube_annotator_rule_coverage_objects" && l["rule"] == "team" && l["key"] == "a" && l["state"] == state {
				return s.GetGauge().GetValue()
			}
		}
	}
	return 0
}

// Two field managers revert the key in turn: the fight is found and
// reported naming the one that owns the key then; the write after the
// wait reads managedFields again, finds the other, and reports the fight
// again naming both, counting it for the second manager too.
func TestSyncHandlerNamesEachManager(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	x := Key{configMaps, "ns", "x"}
	client := newClient(fixture.ConfigMap("ns", "x", map[string]string{"a": "theirs"}))
	rv, gets := 1, 0
	client.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		rv++
		u := fixture.ConfigMap("ns", "x", map[string]string{"a": "1"})
		u.SetResourceVersion(fmt.Sprint(rv))
		return true, u, nil
	})
	client.PrependReactor("get", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		gets++
		owner := []string{"gitops", "flux"}[(gets-1)%2]
		return true, fixture.WithOwned(fixture.ConfigMap("ns", "x", map[string]string{"a": "theirs"}), owner, "a"), nil
	})
	recorder, m := events.NewFakeRecorder(20), metrics.New()
	c := withCache(t, client, Options{Recorder: recorder, Metrics: m},
		fixture.Compile(t, "rules:\n- {name: team, resources: [configmaps], annotations: {a: '1'}}\n"))
	clk := clocktesting.NewFakePassiveClock(time.Now())
	c.fights = newFights(clk, m)
	store := informerOf(c, configMaps).Informer.GetStore()
	revert := func() {
		rv += 100
		u := fixture.ConfigMap("ns", "x", map[string]string{"a": "theirs"})
		u.SetResourceVersion(fmt.Sprint(rv))
		if err := store.Update(u); err != nil {
			t.Fatal(err)
		}
		if err := c.syncHandler(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	for range fight.Writes + 1 {
		revert()
	}
	q, _ := c.queue.Get() // after the wait, at most a second
	c.queue.Done(q)
	clk.SetTime(clk.Now().Add(fight.BackoffBase))
	revert()
	if n := len(patches(client)); n != fight.Writes+1 {
		t.Errorf("%d patches, want %d: the held write goes after the wait", n, fight.Writes+1)
	}
	evs := slices.DeleteFunc(drain(recorder.Events), func(e string) bool { return strings.Contains(e, "Annotated") })
	if len(evs) != 2 || !strings.Contains(evs[0], `Field manager "gitops" reverts`) || !strings.Contains(evs[1], `Field managers "gitops", "flux" revert annotation a (rule team)`) {
		t.Errorf("events %q, want one naming gitops, then one naming gitops and flux", evs)
	}
	for _, manager := range []string{"gitops", "flux"} {
		if got := value(t, m.Fight.Fights.WithLabelValues("team", manager)); got != 1 {
			t.Errorf("fights_total{rule=team,manager=%s} = %v, want 1", manager, got)
		}
	}
	if got := value(t, m.Fight.Fighting.WithLabelValues("configmaps")); got != 1 {
		t.Errorf("fighting_objects{resource=configmaps} = %v, want 1: one object", got)
	}
}
