package expect

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

func TestEcho(t *testing.T) {
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	a, b := Key{cm, "ns", "a"}, Key{cm, "ns", "b"}
	tests := []struct {
		name  string
		setup func(e *Echoes)
		key   Key
		rv    string
		want  bool
		left  int // expectations left afterwards
	}{
		{"the echo of an inert write", func(e *Echoes) { e.Record(a, "1", "2", true) }, a, "2", true, 0},
		{"the echo of a write that is not inert", func(e *Echoes) { e.Record(a, "1", "2", false) }, a, "2", false, 1},
		{"a later version: someone else wrote after us", func(e *Echoes) { e.Record(a, "1", "2", true) }, a, "3", false, 1},
		{"another object", func(e *Echoes) { e.Record(a, "1", "2", true) }, b, "2", false, 1},
		{"nothing recorded", func(*Echoes) {}, a, "2", false, 0},
		{"a sync was asked for before the echo came", func(e *Echoes) {
			e.Record(a, "1", "2", true)
			e.Pending(a, "1")
		}, a, "2", false, 1},
		{"past TTL", func(e *Echoes) {
			e.Record(a, "1", "2", true)
			exp := e.m[a]
			exp.at = time.Now().Add(-TTL - time.Second)
			e.m[a] = exp
		}, a, "2", false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := New()
			tc.setup(e)
			if got := e.Echo(tc.key, tc.rv); got != tc.want {
				t.Errorf("Echo(%v, %q) = %v, want %v", tc.key, tc.rv, got, tc.want)
			}
			if got := e.Len(); got != tc.left {
				t.Errorf("Len() = %d, want %d", got, tc.left)
			}
		})
	}
}

func TestInert(t *testing.T) {
	v := "x"
	set := func(keys ...string) map[string]*string {
		m := map[string]*string{}
		for _, k := range keys {
			m[k] = &v
		}
		return m
	}
	tests := []struct {
		name   string
		rules  string
		change patch.Change
		want   bool
	}{
		{"a literal annotation", `- {name: r, resources: [deployments], annotations: {owner: team-a}}`,
			patch.Change{Annotations: set("owner")}, true},
		{"a key no rule sets (the admission marker, a prune)", `- {name: r, resources: [deployments], annotations: {owner: team-a}}`,
			patch.Change{Annotations: set("owner", "other")}, false},
		{"a label another rule selects by: a chain's first step", `
- {name: a, resources: [deployments], labels: {tier: web}}
- {name: b, resources: [deployments], selector: tier=web, annotations: {web: "yes"}}`,
			patch.Change{Labels: set("tier")}, false},
		{"the chain's last step", `
- {name: a, resources: [deployments], labels: {tier: web}}
- {name: b, resources: [deployments], selector: tier=web, annotations: {web: "yes"}}`,
			patch.Change{Annotations: set("web")}, true},
		{"a key a rule removes", `
- {name: a, resources: [deployments], labels: {old: "1"}}
- {name: b, resources: [deployments], selector: env=prod, removeLabels: [old]}`,
			patch.Change{Labels: set("old")}, false},
		{"rules that read the object's fields", `- {name: r, resources: [deployments], when: "object.spec.replicas > 2", annotations: {big: "yes"}}`,
			patch.Change{Annotations: set("big")}, false},
		{"a rule in audit mode", `
- {name: a, resources: [deployments], annotations: {owner: team-a}}
- {name: b, resources: [deployments], selector: env=prod, mode: audit, annotations: {audited: "yes"}}`,
			patch.Change{Annotations: set("owner")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := rulestest.Compile(t, "rules:\n"+tc.rules+"\n", rulestest.Deployments).Targets[rulestest.Deployments.GVR]
			e := New()
			for range 2 { // the second from what was computed for the target
				if got := e.Inert(target, tc.change); got != tc.want {
					t.Errorf("Inert = %v, want %v", got, tc.want)
				}
			}
		})
	}
}
