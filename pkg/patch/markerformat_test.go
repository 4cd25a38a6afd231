package patch_test

import (
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// A marker without a format entry (the form the previous release and this
// one write) or with format 1 is read; one of a newer format is left
// alone: its keys are not owned, and it is neither rewritten nor deleted.
func TestMarkerFormat(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		owned       patch.Owned
		desired     patch.Desired
		gone        patch.Owned
		readable    bool
		wantMarked  patch.Owned
		want        patch.Change
	}{
		{name: "version-less", readable: true,
			annotations: map[string]string{"a": "1", "b": "2", marker: "a,b"},
			desired:     patch.Desired{Annotations: map[string]string{"b": "2"}},
			wantMarked:  patch.Owned{Annotations: map[string]bool{"a": true, "b": true}},
			want:        patch.Change{Annotations: map[string]*string{"a": nil, marker: ptr.To("b")}}},
		{name: "format 1 named", readable: true,
			annotations: map[string]string{"a": "1", "b": "2", marker: "a,b,format:1"},
			desired:     patch.Desired{Annotations: map[string]string{"b": "2"}},
			wantMarked:  patch.Owned{Annotations: map[string]bool{"a": true, "b": true}},
			want:        patch.Change{Annotations: map[string]*string{"a": nil, marker: ptr.To("b")}}},
		{name: "newer format: no key owned on its word, the marker untouched",
			annotations: map[string]string{"a": "1", "b": "2", marker: "a,b,format:2"},
			desired:     patch.Desired{Annotations: map[string]string{"b": "2"}}},
		{name: "newer format: owned keys still deleted, the marker untouched",
			annotations: map[string]string{"a": "1", "old": "o", marker: "a,format:2"},
			owned:       patch.Owned{Annotations: map[string]bool{"old": true, marker: true}},
			gone:        patch.Owned{Annotations: map[string]bool{"a": true}},
			want:        patch.Change{Annotations: map[string]*string{"old": nil}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := patch.MarkerReadable(tc.annotations[marker]); got != tc.readable {
				t.Errorf("MarkerReadable(%q) = %v, want %v", tc.annotations[marker], got, tc.readable)
			}
			marked := patch.MarkedKeys(tc.annotations, marker)
			if !reflect.DeepEqual(marked, tc.wantMarked) {
				t.Errorf("MarkedKeys() = %+v, want %+v", marked, tc.wantMarked)
			}
			got := patch.PlanMarked(tc.annotations, nil, tc.owned.Union(marked), marker, tc.desired)
			got = patch.Unmark(got, tc.annotations, marker, tc.gone)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PlanMarked() and Unmark() = %s, want %s", dump(got), dump(tc.want))
			}
		})
	}
}
