package expect

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// meta is an object at resourceVersion rv with annotations and labels
// given as "key=value" pairs ("l:" before a label's).
func meta(rv string, kvs ...string) *metav1.ObjectMeta {
	m := &metav1.ObjectMeta{ResourceVersion: rv}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		if l, ok := strings.CutPrefix(k, "l:"); ok {
			metav1.SetMetaDataLabel(m, l, v)
		} else {
			metav1.SetMetaDataAnnotation(m, k, v)
		}
	}
	return m
}

func TestEcho(t *testing.T) {
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	a, b := Key{cm, "ns", "a"}, Key{cm, "ns", "b"}
	one, web := "1", "web"
	setA := patch.Change{Annotations: map[string]*string{"a": &one}}
	// The write set annotation a on an object carrying user=keep, from
	// version 1 to version 2.
	before, after := meta("1", "user=keep"), meta("2", "user=keep", "a=1")
	inert := func(e *Echoes) { e.Record(a, "1", "2", setA, true) }
	owned := func(m *metav1.ObjectMeta, uid types.UID) *metav1.ObjectMeta {
		yes := true
		m.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", UID: uid, Controller: &yes}}
		return m
	}
	tests := []struct {
		name     string
		setup    func(e *Echoes)
		key      Key
		old, obj metav1.Object
		want     bool
		left     int // expectations left afterwards
	}{
		{"the echo of an inert write", inert, a, before, after, true, 0},
		{"the echo of a write that is not inert", func(e *Echoes) { e.Record(a, "1", "2", setA, false) }, a, before, after, false, 0},
		{"a later version: someone else wrote after us", inert, a, after, meta("3", "user=keep", "a=1", "l:x=y"), false, 1},
		{"another object", inert, b, before, after, false, 1},
		{"nothing recorded", func(*Echoes) {}, a, before, after, false, 0},
		{"a sync was asked for before the echo came", func(e *Echoes) {
			inert(e)
			e.Pending(a, "1")
		}, a, before, after, false, 0},
		{"past TTL", func(e *Echoes) {
			inert(e)
			exp := e.m[a.slot()]
			exp.at = now() - TTL - time.Second
			e.m[a.slot()] = exp
		}, a, before, after, false, 0},
		{"applied over a version the cache skipped, which added a key", inert, a, before, meta("2", "user=keep", "a=1", "extra=on"), false, 0},
		{"applied over a version the cache skipped, which removed a key", inert, a, before, meta("2", "a=1"), false, 0},
		{"the key the write set changed meanwhile", inert, a, before, meta("2", "user=keep", "a=2"), false, 0},
		{"the cache had another version than the write was decided on", inert, a, meta("0", "user=keep"), after, false, 0},
		{"a deletion", func(e *Echoes) {
			e.Record(a, "1", "2", patch.Change{Annotations: map[string]*string{"user": nil}}, true)
		},
			a, before, meta("2"), true, 0},
		{"a label", func(e *Echoes) { e.Record(a, "1", "2", patch.Change{Labels: map[string]*string{"tier": &web}}, true) },
			a, before, meta("2", "user=keep", "l:tier=web"), true, 0},
		{"an annotation where the write set a label of that key", func(e *Echoes) {
			e.Record(a, "1", "2", patch.Change{Labels: map[string]*string{"tier": &web}}, true)
		}, a, before, meta("2", "user=keep", "tier=web"), false, 0},
		{"the same controller", inert, a, owned(meta("1", "user=keep"), "u1"), owned(meta("2", "user=keep", "a=1"), "u1"), true, 0},
		{"another controller", inert, a, owned(meta("1", "user=keep"), "u1"), owned(meta("2", "user=keep", "a=1"), "u2"), false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := New()
			tc.setup(e)
			if got := e.Echo(tc.key, tc.old, tc.obj); got != tc.want {
				t.Errorf("Echo(%v, version %s, version %s) = %v, want %v", tc.key, tc.old.GetResourceVersion(), tc.obj.GetResourceVersion(), got, tc.want)
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
