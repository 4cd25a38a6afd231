package objcache

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// Once a cache's projection widens, the objects it made before serve rules
// that need a new key only if they did not carry it; those made after keep
// it. An update that changes the keys an old object dropped is relevant
// then, and only then.
func TestWidenServes(t *testing.T) {
	p := NewProjecting(reconcile.FieldManager, rulestest.ConfigMaps, &projection.Projection{Annotations: sets.New("a"), Labels: sets.New("team")}, NewInterner())
	object := func(annotate func(anns map[string]string)) *cachedMetadata {
		t.Helper()
		m := realistic(1, true)
		annotate(m.Annotations)
		out, err := p.Transform(m)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*cachedMetadata)
	}
	without := object(func(map[string]string) {})
	with := object(func(anns map[string]string) { anns["b"] = "x" })
	needA := func() projection.Projection {
		return projection.Projection{Annotations: sets.New("a"), Labels: sets.New[string]()}
	}
	needB := func() projection.Projection {
		return projection.Projection{Annotations: sets.New("a", "b"), Labels: sets.New("team")}
	}
	needBLabel := func() projection.Projection {
		return projection.Projection{Annotations: sets.New[string](), Labels: sets.New("b")}
	}
	if !Serves(with, needB) || RelevantUpdate(without, with) {
		t.Fatalf("before widening: Serves = false or an update of a dropped key is relevant; want every object to serve, the update dropped")
	}
	p.Widen(needB())
	after := object(func(anns map[string]string) { anns["b"] = "x" })
	for _, tc := range []struct {
		name string
		obj  *cachedMetadata
		need func() projection.Projection
		want bool
	}{
		{"made before, without the new key", without, needB, true},
		{"made before, with the new key", with, needB, false},
		{"made before, with the key, which the rules do not need", with, needA, true},
		{"made before, with an annotation named as the label needed", with, needBLabel, true},
		{"made after", after, needB, true},
	} {
		if got := Serves(tc.obj, tc.need); got != tc.want {
			t.Errorf("%s: Serves() = %v, want %v", tc.name, got, tc.want)
		}
	}
	if after.annotations["b"] != "x" {
		t.Errorf("an object made after widening dropped the new key: %v", after.annotations)
	}
	if !RelevantUpdate(without, with) {
		t.Errorf("an update, made before widening, that adds a dropped key is not relevant once the projection widened")
	}
	if RelevantUpdate(without, without) {
		t.Errorf("an update that changes nothing the cache keeps is relevant")
	}
}
