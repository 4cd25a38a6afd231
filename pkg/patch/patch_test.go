package patch_test

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

func TestPlan(t *testing.T) {
	tests := []struct {
		name                string
		annotations, labels map[string]string
		owned               patch.Owned
		desired             patch.Desired
		want                patch.Change
	}{
		{name: "nothing wanted, nothing owned", annotations: map[string]string{"a": "1"}},
		{name: "missing key is set",
			desired: patch.Desired{Annotations: map[string]string{"a": "1"}},
			want:    patch.Change{Annotations: map[string]*string{"a": ptr.To("1")}}},
		{name: "same value: no change",
			annotations: map[string]string{"a": "1"},
			desired:     patch.Desired{Annotations: map[string]string{"a": "1"}}},
		{name: "different value is set; other keys untouched",
			annotations: map[string]string{"a": "0", "user": "x"},
			desired:     patch.Desired{Annotations: map[string]string{"a": "1"}},
			want:        patch.Change{Annotations: map[string]*string{"a": ptr.To("1")}}},
		{name: "owned key no longer wanted is deleted",
			annotations: map[string]string{"old": "1", "user": "x"},
			owned:       patch.Owned{Annotations: map[string]bool{"old": true}},
			want:        patch.Change{Annotations: map[string]*string{"old": nil}}},
		{name: "owned key already gone: nothing",
			owned: patch.Owned{Annotations: map[string]bool{"old": true}}},
		{name: "owned key still wanted stays",
			annotations: map[string]string{"a": "1"},
			owned:       patch.Owned{Annotations: map[string]bool{"a": true}},
			desired:     patch.Desired{Annotations: map[string]string{"a": "1"}}},
		{name: "key set by others is never deleted unless removed explicitly",
			annotations: map[string]string{"user": "x"},
			labels:      map[string]string{"team": "a"}},
		{name: "explicit removal deletes others' keys",
			annotations: map[string]string{"user": "x", "keep": "y"},
			labels:      map[string]string{"team": "a"},
			desired:     patch.Desired{RemoveAnnotations: []string{"user", "absent"}, RemoveLabels: []string{"team"}},
			want:        patch.Change{Annotations: map[string]*string{"user": nil}, Labels: map[string]*string{"team": nil}}},
		{name: "a key both set and removed (two rules) is set",
			desired: patch.Desired{Annotations: map[string]string{"a": "1"}, RemoveAnnotations: []string{"a"}},
			want:    patch.Change{Annotations: map[string]*string{"a": ptr.To("1")}}},
		{name: "if absent: a missing key is set",
			desired: patch.Desired{Labels: map[string]string{"psa": "baseline"}, IfAbsentLabels: map[string]bool{"psa": true}},
			want:    patch.Change{Labels: map[string]*string{"psa": ptr.To("baseline")}}},
		{name: "if absent: someone else's key keeps its value",
			labels:  map[string]string{"psa": "privileged"},
			desired: patch.Desired{Labels: map[string]string{"psa": "baseline"}, IfAbsentLabels: map[string]bool{"psa": true}}},
		{name: "if absent: an owned key is updated",
			annotations: map[string]string{"inject": "disabled"},
			owned:       patch.Owned{Annotations: map[string]bool{"inject": true}},
			desired:     patch.Desired{Annotations: map[string]string{"inject": "enabled"}, IfAbsentAnnotations: map[string]bool{"inject": true}},
			want:        patch.Change{Annotations: map[string]*string{"inject": ptr.To("enabled")}}},
		{name: "if absent: someone else's key is not removed by a removal of another rule",
			labels:  map[string]string{"psa": "privileged"},
			desired: patch.Desired{Labels: map[string]string{"psa": "baseline"}, IfAbsentLabels: map[string]bool{"psa": true}, RemoveLabels: []string{"psa"}}},
		{name: "labels work like annotations",
			labels:  map[string]string{"old": "1"},
			owned:   patch.Owned{Labels: map[string]bool{"old": true}},
			desired: patch.Desired{Labels: map[string]string{"new": "2"}},
			want:    patch.Change{Labels: map[string]*string{"old": nil, "new": ptr.To("2")}}},
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
		{"set", patch.Change{Annotations: map[string]*string{"b": ptr.To("2"), "a": ptr.To("1")}},
			`{"metadata":{"annotations":{"a":"1","b":"2"}}}`},
		{"delete is null", patch.Change{Annotations: map[string]*string{"a": nil}},
			`{"metadata":{"annotations":{"a":null}}}`},
		{"labels only", patch.Change{Labels: map[string]*string{"team": ptr.To("web")}},
			`{"metadata":{"labels":{"team":"web"}}}`},
		{"both", patch.Change{Annotations: map[string]*string{"a": ptr.To("x")}, Labels: map[string]*string{"l": nil}},
			`{"metadata":{"annotations":{"a":"x"},"labels":{"l":null}}}`},
		{"escaping", patch.Change{Annotations: map[string]*string{"a": ptr.To("\"q\" <b> 日本\n")}},
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
	entry := func(manager, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":` + fields + `}`)}}
	}
	entries := []metav1.ManagedFieldsEntry{
		entry("kube-annotator", `{"f:annotations":{".":{},"f:a":{}}}`),
		entry("kubectl", `{"f:annotations":{"f:user":{}},"f:labels":{}}`),
		entry("kube-annotator", `{"f:labels":{"f:team":{}}}`),
	}
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		manager string
		want    patch.Owned
	}{
		{"own entries only, across entries", entries, "kube-annotator",
			patch.Owned{Annotations: map[string]bool{"a": true}, Labels: map[string]bool{"team": true}}},
		{"another manager", entries, "kubectl", patch.Owned{Annotations: map[string]bool{"user": true}}},
		{"unknown manager", entries, "nobody", patch.Owned{}},
		{"no managedFields", nil, "kube-annotator", patch.Owned{}},
		{"an entry without fields (a cache stub)", []metav1.ManagedFieldsEntry{{Manager: "kube-annotator"}}, "kube-annotator", patch.Owned{}},
		{"malformed fields are skipped", []metav1.ManagedFieldsEntry{
			{Manager: "kube-annotator", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":[1]}`)}},
			{Manager: "kube-annotator", FieldsV1: &metav1.FieldsV1{Raw: []byte(`not json`)}},
			entry("kube-annotator", `{"f:annotations":{"f:":{},"x":{}}}`),
		}, "kube-annotator", patch.Owned{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Twice, concurrently: the second reads the field sets the
			// first remembered. Each result is the caller's own to change.
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					got := patch.OwnedBy(tc.entries, tc.manager)
					if !reflect.DeepEqual(got, tc.want) {
						t.Errorf("OwnedBy = %+v, want %+v", got, tc.want)
					}
					if got.Annotations != nil {
						got.Annotations["changed-by-the-caller"] = true
					}
				})
			}
			wg.Wait()
		})
	}
}
