package patch_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

func ptr(s string) *string { return &s }

func TestPlan(t *testing.T) {
	tests := []struct {
		name                string
		annotations, labels map[string]any
		owned               patch.Owned
		desired             patch.Desired
		want                patch.Change
	}{
		{name: "nothing wanted, nothing owned", annotations: map[string]any{"a": "1"}},
		{name: "missing key is set",
			desired: patch.Desired{Annotations: map[string]string{"a": "1"}},
			want:    patch.Change{Annotations: map[string]*string{"a": ptr("1")}}},
		{name: "same value: no change",
			annotations: map[string]any{"a": "1"},
			desired:     patch.Desired{Annotations: map[string]string{"a": "1"}}},
		{name: "different value is set; other keys untouched",
			annotations: map[string]any{"a": "0", "user": "x"},
			desired:     patch.Desired{Annotations: map[string]string{"a": "1"}},
			want:        patch.Change{Annotations: map[string]*string{"a": ptr("1")}}},
		{name: "non-string current value is replaced",
			annotations: map[string]any{"a": true},
			desired:     patch.Desired{Annotations: map[string]string{"a": "true"}},
			want:        patch.Change{Annotations: map[string]*string{"a": ptr("true")}}},
		{name: "owned key no longer wanted is deleted",
			annotations: map[string]any{"old": "1", "user": "x"},
			owned:       patch.Owned{Annotations: map[string]bool{"old": true}},
			want:        patch.Change{Annotations: map[string]*string{"old": nil}}},
		{name: "owned key already gone: nothing",
			owned: patch.Owned{Annotations: map[string]bool{"old": true}}},
		{name: "owned key still wanted stays",
			annotations: map[string]any{"a": "1"},
			owned:       patch.Owned{Annotations: map[string]bool{"a": true}},
			desired:     patch.Desired{Annotations: map[string]string{"a": "1"}}},
		{name: "key set by others is never deleted unless removed explicitly",
			annotations: map[string]any{"user": "x"},
			labels:      map[string]any{"team": "a"}},
		{name: "explicit removal deletes others' keys",
			annotations: map[string]any{"user": "x", "keep": "y"},
			labels:      map[string]any{"team": "a"},
			desired:     patch.Desired{RemoveAnnotations: []string{"user", "absent"}, RemoveLabels: []string{"team"}},
			want:        patch.Change{Annotations: map[string]*string{"user": nil}, Labels: map[string]*string{"team": nil}}},
		{name: "a key both set and removed (two rules) is set",
			desired: patch.Desired{Annotations: map[string]string{"a": "1"}, RemoveAnnotations: []string{"a"}},
			want:    patch.Change{Annotations: map[string]*string{"a": ptr("1")}}},
		{name: "labels work like annotations",
			labels:  map[string]any{"old": "1"},
			owned:   patch.Owned{Labels: map[string]bool{"old": true}},
			desired: patch.Desired{Labels: map[string]string{"new": "2"}},
			want:    patch.Change{Labels: map[string]*string{"old": nil, "new": ptr("2")}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := patch.Plan(tc.annotations, tc.labels, tc.owned, tc.desired)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Plan = %s, want %s", dump(got), dump(tc.want))
			}
			if got.Empty() != tc.want.Empty() {
				t.Errorf("Empty() = %v", got.Empty())
			}
		})
	}
}

func dump(c patch.Change) string {
	data, _ := json.Marshal(c)
	return string(data)
}

func TestMergePatch(t *testing.T) {
	tests := []struct {
		name   string
		change patch.Change
		want   string
	}{
		{"set", patch.Change{Annotations: map[string]*string{"b": ptr("2"), "a": ptr("1")}},
			`{"metadata":{"annotations":{"a":"1","b":"2"}}}`},
		{"delete is null", patch.Change{Annotations: map[string]*string{"a": nil}},
			`{"metadata":{"annotations":{"a":null}}}`},
		{"labels only", patch.Change{Labels: map[string]*string{"team": ptr("web")}},
			`{"metadata":{"labels":{"team":"web"}}}`},
		{"both", patch.Change{Annotations: map[string]*string{"a": ptr("x")}, Labels: map[string]*string{"l": nil}},
			`{"metadata":{"annotations":{"a":"x"},"labels":{"l":null}}}`},
		{"escaping", patch.Change{Annotations: map[string]*string{"a": ptr("\"q\" <b> 日本\n")}},
			`{"metadata":{"annotations":{"a":"\"q\" \u003cb\u003e 日本\n"}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.change.MergePatch()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("MergePatch = %s, want %s", got, tc.want)
			}
		})
	}
	// An empty change would be a request for nothing (and an empty
	// annotations map encoded as null would delete them all).
	for _, c := range []patch.Change{{}, {Annotations: map[string]*string{}}} {
		if got, err := c.MergePatch(); err == nil {
			t.Errorf("MergePatch(%s) = %s, want an error", dump(c), got)
		}
	}
}

func TestOwnedBy(t *testing.T) {
	entry := func(manager string, fields map[string]any) map[string]any {
		return map[string]any{"manager": manager, "operation": "Update", "fieldsV1": map[string]any{"f:metadata": fields}}
	}
	obj := map[string]any{"metadata": map[string]any{"managedFields": []any{
		entry("kube-annotator", map[string]any{"f:annotations": map[string]any{"f:a": map[string]any{}, ".": map[string]any{}}}),
		entry("kubectl", map[string]any{"f:annotations": map[string]any{"f:user": map[string]any{}}}),
		entry("kube-annotator", map[string]any{"f:labels": map[string]any{"f:team": map[string]any{}}}),
	}}}
	tests := []struct {
		name    string
		obj     map[string]any
		manager string
		want    patch.Owned
	}{
		{"own entries only, across entries", obj, "kube-annotator",
			patch.Owned{Annotations: map[string]bool{"a": true}, Labels: map[string]bool{"team": true}}},
		{"another manager", obj, "kubectl", patch.Owned{Annotations: map[string]bool{"user": true}}},
		{"unknown manager", obj, "nobody", patch.Owned{}},
		{"no managedFields", map[string]any{"metadata": map[string]any{}}, "kube-annotator", patch.Owned{}},
		{"no metadata", map[string]any{}, "kube-annotator", patch.Owned{}},
		{"malformed entries are skipped", map[string]any{"metadata": map[string]any{"managedFields": []any{"x", 1, nil}}},
			"kube-annotator", patch.Owned{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := patch.OwnedBy(tc.obj, tc.manager); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("OwnedBy = %+v, want %+v", got, tc.want)
			}
		})
	}
}
