package patch_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

const marker = "configmaps.admission.kube-annotator.io/kube-annotator"

func TestMarkerKey(t *testing.T) {
	cms := schema.GroupResource{Resource: "configmaps"}
	tests := []struct {
		manager string
		gr      schema.GroupResource
		want    string
	}{
		{"kube-annotator", cms, marker},
		{"team-a.v2", schema.GroupResource{Group: "apps", Resource: "deployments"}, "deployments.apps.admission.kube-annotator.io/team-a.v2"},
		{"kube-annotator", schema.GroupResource{Group: "ship.nwiizo.dev", Resource: "frigates"}, "frigates.ship.nwiizo.dev.admission.kube-annotator.io/kube-annotator"},
		{"", cms, ""},
		{"kube-annotator", schema.GroupResource{}, ""},
		{"has space", cms, ""},
		{"kubectl:apply", cms, ""},
		{strings.Repeat("m", 64), cms, ""},
	}
	for _, tc := range tests {
		got := patch.MarkerKey(tc.manager, tc.gr)
		if got != tc.want {
			t.Errorf("MarkerKey(%q, %v) = %q, want %q", tc.manager, tc.gr, got, tc.want)
		}
		if got != "" && !patch.IsMarker(got) {
			t.Errorf("IsMarker(%q) = false", got)
		}
	}
	for key, want := range map[string]bool{"a": false, "admission.kube-annotator.io/x": false, "x.admission.kube-annotator.io": false,
		"Pods.Admission.kube-annotator.io/x": true, "example.com/admission.kube-annotator.io": false} {
		if got := patch.IsMarker(key); got != want {
			t.Errorf("IsMarker(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestParseMarker(t *testing.T) {
	tests := []struct {
		value string
		want  patch.Owned
	}{
		{"", patch.Owned{}},
		{"a", patch.Owned{Annotations: map[string]bool{"a": true}}},
		{"example.com/a,label:team, label:example.com/b ,,", patch.Owned{
			Annotations: map[string]bool{"example.com/a": true},
			Labels:      map[string]bool{"team": true, "example.com/b": true}}},
		{"label:", patch.Owned{}},
	}
	for _, tc := range tests {
		if got := patch.ParseMarker(tc.value); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseMarker(%q) = %+v, want %+v", tc.value, got, tc.want)
		}
	}
	o := patch.Owned{Annotations: map[string]bool{"z": true, "a": true}, Labels: map[string]bool{"team": true}}
	if got, want := patch.FormatMarker(o), "a,label:team,z"; got != want {
		t.Errorf("FormatMarker() = %q, want %q", got, want)
	}
	if got := patch.ParseMarker(patch.FormatMarker(o)); !reflect.DeepEqual(got, o) {
		t.Errorf("ParseMarker(FormatMarker(o)) = %+v, want %+v", got, o)
	}
}

func TestPlanMarked(t *testing.T) {
	tests := []struct {
		name                string
		annotations, labels map[string]string
		owned               patch.Owned
		marker              string
		desired             patch.Desired
		want                patch.Change
	}{
		{name: "set at admission, still wanted: nothing to do",
			annotations: map[string]string{"a": "1", marker: "a,label:l"}, labels: map[string]string{"l": "x"},
			marker:  marker,
			desired: patch.Desired{Annotations: map[string]string{"a": "1"}, Labels: map[string]string{"l": "x"}}},
		{name: "listed keys no rule wants are deleted, with the marker",
			annotations: map[string]string{"a": "1", "user": "u", marker: "a,label:l"}, labels: map[string]string{"l": "x"},
			marker: marker,
			want:   patch.Change{Annotations: map[string]*string{"a": nil, marker: nil}, Labels: map[string]*string{"l": nil}}},
		{name: "the marker keeps the listed keys that stay",
			annotations: map[string]string{"a": "1", "b": "2", marker: "a,b"},
			marker:      marker,
			desired:     patch.Desired{Annotations: map[string]string{"b": "2"}},
			want:        patch.Change{Annotations: map[string]*string{"a": nil, marker: ptr.To("b")}}},
		{name: "a change of value leaves the marker as it is",
			annotations: map[string]string{"a": "1", marker: "a"},
			marker:      marker,
			desired:     patch.Desired{Annotations: map[string]string{"a": "2"}},
			want:        patch.Change{Annotations: map[string]*string{"a": ptr.To("2")}}},
		{name: "a stale entry is dropped only along with another change",
			annotations: map[string]string{marker: "gone,a"},
			marker:      marker,
			desired:     patch.Desired{Annotations: map[string]string{"a": "1"}},
			want:        patch.Change{Annotations: map[string]*string{"a": ptr.To("1"), marker: ptr.To("a")}}},
		{name: "a stale entry alone is no reason to write",
			annotations: map[string]string{marker: "gone"}, marker: marker},
		{name: "keys not listed and not owned are others'",
			annotations: map[string]string{"user": "u", marker: "a"}, marker: marker},
		{name: "managedFields ownership still counts",
			annotations: map[string]string{"old": "o", marker: "a"},
			owned:       patch.Owned{Annotations: map[string]bool{"old": true}},
			marker:      marker,
			want:        patch.Change{Annotations: map[string]*string{"old": nil, marker: nil}}},
		{name: "the marker is never deleted as an owned key",
			annotations: map[string]string{"a": "1", marker: "a"},
			owned:       patch.Owned{Annotations: map[string]bool{marker: true}},
			marker:      marker,
			desired:     patch.Desired{Annotations: map[string]string{"a": "1"}}},
		{name: "no marker key: Plan, the annotation is a key like any other",
			annotations: map[string]string{"a": "1", marker: "a"}},
		{name: "another manager's marker lists nothing of ours",
			annotations: map[string]string{"a": "1", "configmaps.admission.kube-annotator.io/other": "a"}, marker: marker},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			owned := tc.owned.Union(patch.MarkedKeys(tc.annotations, tc.marker))
			got := patch.PlanMarked(tc.annotations, tc.labels, owned, tc.marker, tc.desired)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PlanMarked() = %s, want %s", dump(got), dump(tc.want))
			}
		})
	}
}

// FuzzPlanMarked checks PlanMarked against Plan, whose own properties
// FuzzPlan checks: the keys the marker lists count as owned and nothing
// else changes, except the marker, which is rewritten only along with
// another change, to list exactly the listed keys that remain (or is
// deleted); planning again on the result changes nothing. Input lines are
// FuzzPlan's, plus "m <key>" (the marker lists an annotation key) and
// "ml <key>" (a label key); the object carries the marker when any line
// names it.
func FuzzPlanMarked(f *testing.F) {
	for _, seed := range []string{
		"m a\nc a=1\n",
		"m a\nm b\nc a=1\nc b=2\nd b=2\n",
		"ml team\ncl team=web\nc user=x\no old\nc old=1\n",
		"m gone\nd a=1\n",
		"m a\nr a\nc a=1\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if !utf8.ValidString(data) {
			return
		}
		in := parsePlanInput(data)
		listed, hasMarker := parseMarked(data)
		delete(in.annotations, marker)
		if hasMarker {
			in.annotations[marker] = patch.FormatMarker(listed)
		}
		// The marker is kube-annotator's: rules cannot name it.
		delete(in.desired.Annotations, marker)
		in.desired.RemoveAnnotations = slices.DeleteFunc(in.desired.RemoveAnnotations, func(k string) bool { return k == marker })
		anns0 := maps.Clone(in.annotations)
		marked := in.owned.Union(patch.MarkedKeys(in.annotations, marker))
		got := patch.PlanMarked(in.annotations, in.labels, marked, marker, in.desired)
		if !maps.Equal(in.annotations, anns0) {
			t.Fatalf("PlanMarked modified its input")
		}

		owned := in.owned
		if hasMarker {
			owned = patch.Owned{Annotations: unionOf(in.owned.Annotations, listed.Annotations), Labels: unionOf(in.owned.Labels, listed.Labels)}
			delete(owned.Annotations, marker)
		}
		if !reflect.DeepEqual(marked, owned) && hasMarker && !in.owned.Annotations[marker] {
			t.Errorf("owned with MarkedKeys = %v, want %v", marked, owned)
		}
		want := patch.Plan(in.annotations, in.labels, owned, in.desired)
		gotMarker, markerChanged := got.Annotations[marker]
		rest := patch.Change{Annotations: maps.Clone(got.Annotations), Labels: got.Labels}
		delete(rest.Annotations, marker)
		if len(rest.Annotations) == 0 {
			rest.Annotations = nil
		}
		if !reflect.DeepEqual(rest, want) {
			t.Fatalf("PlanMarked() without the marker = %s, want Plan with the listed keys owned: %s", dump(rest), dump(want))
		}

		anns, lbls := apply(in.annotations, got.Annotations), apply(in.labels, got.Labels)
		switch {
		case !hasMarker || want.Empty():
			if markerChanged {
				t.Errorf("marker changed to %v without another change", gotMarker)
			}
		default:
			remain := patch.Owned{Annotations: present(listed.Annotations, anns), Labels: present(listed.Labels, lbls)}
			delete(remain.Annotations, marker)
			if v, ok := anns[marker]; patch.FormatMarker(remain) == "" && ok {
				t.Errorf("marker %q kept, though no listed key remains", v)
			} else if ok && v != patch.FormatMarker(remain) {
				t.Errorf("marker = %q, want %q", v, patch.FormatMarker(remain))
			}
		}
		if again := patch.PlanMarked(anns, lbls, in.owned.Union(patch.MarkedKeys(anns, marker)), marker, in.desired); !again.Empty() {
			t.Errorf("PlanMarked of the result is not empty: %s", dump(again))
		}
	})
}

// parseMarked reads the "m" and "ml" lines of a FuzzPlanMarked input.
func parseMarked(data string) (patch.Owned, bool) {
	var o patch.Owned
	seen := false
	for line := range strings.Lines(data) {
		what, k, ok := strings.Cut(strings.TrimRight(line, "\n"), " ")
		// Keys hold no comma or colon (the API server validates them).
		if !ok || k == "" || strings.ContainsAny(k, ",:") || strings.TrimSpace(k) != k || (what != "m" && what != "ml") {
			continue
		}
		seen = true
		if what == "ml" {
			o.Labels = set(o.Labels, k)
		} else {
			o.Annotations = set(o.Annotations, k)
		}
	}
	return o, seen
}

func unionOf(a, b map[string]bool) map[string]bool {
	out := maps.Clone(a)
	for k := range b {
		out = set(out, k)
	}
	return out
}

// apply returns current with change made.
func apply(current map[string]string, change map[string]*string) map[string]string {
	out := maps.Clone(current)
	for k, v := range change {
		if v == nil {
			delete(out, k)
		} else {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = *v
		}
	}
	return out
}

// present returns the keys of listed that m has.
func present(listed map[string]bool, m map[string]string) map[string]bool {
	var out map[string]bool
	for k := range listed {
		if _, ok := m[k]; ok {
			out = set(out, k)
		}
	}
	return out
}
