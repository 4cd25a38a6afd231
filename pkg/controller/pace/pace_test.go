package pace

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// A change is what a write to a ConfigMap in a namespace would do.
type change int

const (
	adminRule  change = iota // the main file's rule sets a key
	tenantRule               // a's rule ("a/team", as package tenants names it) sets one
	deletion                 // a key the controller set, that no rule wants, is deleted
)

// decide returns the decision of ch on a ConfigMap of namespace ns.
func decide(t *testing.T, ns string, ch change) (reconcile.Decision, *unstructured.Unstructured) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("v1")
	obj.SetKind("ConfigMap")
	obj.SetNamespace(ns)
	obj.SetName("cm")
	target := reconcile.Prune(rulestest.ConfigMaps)
	switch ch {
	case adminRule, tenantRule:
		f, err := rules.Parse("rules.yaml", []byte("rules:\n- {name: team, resources: [configmaps], labels: {team: a}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if ch == tenantRule {
			f.Rules[0].Name = "a/team"
		}
		set, _, err := rules.Compile("rules.yaml", f, func(string) (source.Resource, error) { return rulestest.ConfigMaps, nil })
		if err != nil {
			t.Fatal(err)
		}
		target = set.Targets[rulestest.ConfigMaps.GVR]
	case deletion:
		obj.SetLabels(map[string]string{"old": "x"})
		fields, _ := json.Marshal(map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{"f:old": map[string]any{}}}})
		obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: reconcile.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fields}}})
	}
	d, err := reconcile.Decide(target, obj, nil, reconcile.FieldManager)
	if err != nil || d.Empty() {
		t.Fatalf("decision %+v, %v: want a change", d, err)
	}
	return d, obj
}

// The writes of a tenant's rules wait their turn at the tenant's rate, in
// a burst of as many; other writes never wait.
func TestWait(t *testing.T) {
	for _, tc := range []struct {
		name      string
		perSecond int
		ns        string
		ch        change
		want      []time.Duration // the waits of writes 1, 2, … at once
	}{
		{"a tenant's rule", 2, "a", tenantRule, []time.Duration{0, 0, 500 * time.Millisecond, time.Second}},
		{"a deletion in a tenant's namespace", 2, "a", deletion, []time.Duration{0, 0, 500 * time.Millisecond}},
		{"the main file's rule in a tenant's namespace", 2, "a", adminRule, []time.Duration{0, 0, 0, 0}},
		{"a deletion where no tenant has rules", 2, "b", deletion, []time.Duration{0, 0, 0}},
		{"no rate", 0, "a", tenantRule, []time.Duration{0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Unix(1e9, 0))
			p := New(clk, nil)
			p.Set(tc.perSecond, []string{"a"})
			d, obj := decide(t, tc.ns, tc.ch)
			for i, want := range tc.want {
				if got := p.Wait(i, tc.ns, d, obj); got != want {
					t.Errorf("write %d waits %v, want %v", i+1, got, want)
				}
			}
		})
	}
}

// A write told to wait has its turn reserved: it comes back and writes
// then, without taking another's, and not before.
func TestWaitReservesTheTurn(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1e9, 0))
	p := New(clk, nil)
	p.Set(1, []string{"a"})
	d, obj := decide(t, "a", tenantRule)
	if w := p.Wait("first", "a", d, obj); w != 0 {
		t.Fatalf("first write waits %v", w)
	}
	if w := p.Wait("second", "a", d, obj); w != time.Second {
		t.Fatalf("second write waits %v, want 1s", w)
	}
	clk.SetTime(clk.Now().Add(400 * time.Millisecond))
	if w := p.Wait("second", "a", d, obj); w != 600*time.Millisecond {
		t.Errorf("second write back early waits %v, want the rest of its turn, 600ms", w)
	}
	clk.SetTime(clk.Now().Add(600 * time.Millisecond))
	if w := p.Wait("second", "a", d, obj); w != 0 {
		t.Errorf("second write back at its turn waits %v, want 0", w)
	}
	if w := p.Wait("third", "a", d, obj); w != time.Second {
		t.Errorf("third write waits %v, want 1s: the second took the token of its turn", w)
	}
	var nilPacer *Pacer
	if w := nilPacer.Wait("x", "a", d, obj); w != 0 {
		t.Errorf("a nil Pacer makes a write wait %v", w)
	}
}
