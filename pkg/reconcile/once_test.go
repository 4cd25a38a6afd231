package reconcile

import (
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// TestDecideOnce checks recorded values (once: true): set where the
// object lacks the key, then kept as they are — ours or someone else's —
// whatever the source reads, and not deleted when the source is missing;
// a recorded key no rule wants any more is pruned.
func TestDecideOnce(t *testing.T) {
	const recorded = "rules:\n- {name: r, resources: [configmaps], labels: {team: {cel: \"object.metadata.labels['src']\", once: true}}}\n"
	const defaulted = "rules:\n- {name: r, resources: [configmaps], labels: {team: {fromNamespace: {label: team}, default: none, once: true}}}\n"
	const other = "rules:\n- {name: r, resources: [configmaps], labels: {x: y}}\n"
	ours := entry(FieldManager, nil, []string{"team"})
	tests := []struct {
		name  string
		rules string
		obj   patch.Object
		want  patch.Change
	}{
		{name: "absent: recorded", rules: recorded, obj: obj("ns", "x", nil, map[string]string{"src": "a"}, kubectl),
			want: patch.Change{Labels: map[string]*string{"team": ptr.To("a")}}},
		{name: "ours, the source changed: kept", rules: recorded,
			obj: obj("ns", "x", nil, map[string]string{"src": "b", "team": "a"}, kubectl, ours)},
		{name: "someone else's: kept", rules: recorded,
			obj: obj("ns", "x", nil, map[string]string{"src": "b", "team": "theirs"}, entry("kubectl", nil, []string{"team"}))},
		{name: "ours, the source missing: kept, not defaulted", rules: defaulted, obj: obj("ns", "x", nil, map[string]string{"team": "a"}, kubectl, ours)},
		{name: "absent, the source missing: the default", rules: defaulted, obj: obj("ns", "x", nil, nil, kubectl),
			want: patch.Change{Labels: map[string]*string{"team": ptr.To("none")}}},
		{name: "no rule records it any more: pruned", rules: other, obj: obj("ns", "x", nil, map[string]string{"team": "a", "x": "y"}, kubectl, ours),
			want: patch.Change{Labels: map[string]*string{"team": nil}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(target(t, tc.rules), tc.obj, nil, FieldManager)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Change, tc.want) {
				t.Errorf("Change = %s, want %s", testutil.MustJSON(d.Change), testutil.MustJSON(tc.want))
			}
		})
	}
}
