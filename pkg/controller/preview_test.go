package controller

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// Preview counts, in the caches, the objects new rules would change, by
// the rules that change them, and names the resources it cannot count.
func TestPreview(t *testing.T) {
	const inForce = "rules:\n- {name: ab, resources: [configmaps], annotations: {a: '1'}}\n"
	const next = "rules:\n- {name: ab, resources: [configmaps], annotations: {a: '1'}}\n" +
		"- {name: cd, resources: [configmaps], names: ['y*'], annotations: {c: '3'}}\n" +
		"- {name: ns, resources: [namespaces], annotations: {n: '1'}}\n"
	x := fixture.WithOwned(fixture.ConfigMap("team", "x", map[string]string{"a": "1"}), reconcile.FieldManager, "a")
	y := fixture.ConfigMap("team", "y", nil)
	z := fixture.WithOwned(fixture.ConfigMap("team", "z", map[string]string{"gone": "v"}), reconcile.FieldManager, "gone")
	c := withCache(t, newClient(), Options{}, fixture.Compile(t, inForce), x, y, z)

	if p := c.Preview(fixture.Compile(t, inForce)); p.Total != 2 || !reflect.DeepEqual(p.PerRule, map[string]int{"ab": 2, NoRule: 1}) {
		t.Errorf("Preview(rules in force) = %+v, want y and z: 2 objects, ab: 2, %s: 1", p, NoRule)
	}
	p := c.Preview(fixture.Compile(t, next))
	want := Preview{
		Total:   2,
		PerRule: map[string]int{"ab": 2, "cd": 1, NoRule: 1},
		Unknown: []schema.GroupVersionResource{namespaces},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Preview() = %+v, want %+v", p, want)
	}
}

// New rules that no longer name a recorded resource count its prune: the
// keys the controller set there are deleted. Without a record, nothing is.
func TestPreviewCountsPrunes(t *testing.T) {
	const inForce = "rules:\n- {name: ab, resources: [configmaps], annotations: {a: '1'}}\n"
	x := fixture.WithOwned(fixture.ConfigMap("team", "x", map[string]string{"a": "1"}), reconcile.FieldManager, "a")
	y := fixture.ConfigMap("team", "y", map[string]string{"a": "1"})
	for _, tc := range []struct {
		name   string
		record Record
		want   Preview
	}{
		{"recorded", newRecord(configMaps.GroupResource()),
			Preview{Total: 1, PerRule: map[string]int{NoRule: 1}, Unknown: []schema.GroupVersionResource{namespaces}}},
		{"no record", nil, Preview{PerRule: map[string]int{}, Unknown: []schema.GroupVersionResource{namespaces}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := withCache(t, newClient(), Options{Record: tc.record}, fixture.Compile(t, inForce), x, y)
			if p := c.Preview(fixture.Compile(t, "rules:\n- {name: ns, resources: [namespaces], annotations: {n: '1'}}\n")); !reflect.DeepEqual(p, tc.want) {
				t.Errorf("Preview() = %+v, want %+v", p, tc.want)
			}
		})
	}
}

// Changed counts, per namespace asked, the objects new rules would change
// otherwise than the rules in force: not those both leave to change alike.
func TestChanged(t *testing.T) {
	const inForce = "rules:\n- {name: ab, resources: [configmaps], annotations: {a: '1'}}\n"
	const next = inForce + "- {name: cd, resources: [configmaps], names: ['y*'], annotations: {c: '3'}}\n"
	objs := []*unstructured.Unstructured{
		fixture.ConfigMap("team", "x", nil),                          // ab would change it under both
		fixture.ConfigMap("team", "y", nil),                          // cd adds to ab's change
		fixture.ConfigMap("team", "y2", map[string]string{"a": "1"}), // cd alone changes it
		fixture.ConfigMap("other", "y", nil),                         // a namespace not asked
	}
	c := withCache(t, newClient(), Options{}, fixture.Compile(t, inForce), objs...)
	got := c.Changed(fixture.Compile(t, inForce), fixture.Compile(t, next), []string{"team"})
	if want := map[string]int{"team": 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changed() = %v, want %v", got, want)
	}
	if got := c.Changed(fixture.Compile(t, next), fixture.Compile(t, next), []string{"team", "other"}); len(got) != 0 {
		t.Errorf("Changed(the same rules) = %v, want nothing", got)
	}
}
