package reconcile

import (
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// TestDecideHoldsFailedValues checks that a value whose expression fails
// never deletes or replaces the key the object carries — ours or someone
// else's, with or without a default — while a missing source still does,
// and the default is set where the object lacks the key.
func TestDecideHoldsFailedValues(t *testing.T) {
	const copied = "rules:\n- {name: r, resources: [configmaps], labels: {copy: {cel: \"object.metadata.labels['src']\"}}}\n"
	const defaulted = "rules:\n- {name: r, resources: [configmaps], labels: {copy: {cel: \"object.metadata.labels['src']\", default: none}}}\n"
	const read = "rules:\n- {name: r, resources: [configmaps], labels: {copy: {fromNamespace: {label: src}}}}\n"
	ours := entry(FieldManager, nil, []string{"copy"})
	tests := []struct {
		name  string
		rules string
		obj   patch.Object
		want  patch.Change
	}{
		{name: "the expression yields: set", rules: copied, obj: obj("ns", "x", nil, map[string]string{"src": "a"}, kubectl),
			want: patch.Change{Labels: map[string]*string{"copy": ptr.To("a")}}},
		{name: "the expression yields another value: updated", rules: copied,
			obj:  obj("ns", "x", nil, map[string]string{"src": "b", "copy": "a"}, kubectl, ours),
			want: patch.Change{Labels: map[string]*string{"copy": ptr.To("b")}}},
		{name: "it fails, ours: kept", rules: copied, obj: obj("ns", "x", nil, map[string]string{"copy": "a"}, kubectl, ours)},
		{name: "it fails, ours, with a default: kept, not defaulted", rules: defaulted,
			obj: obj("ns", "x", nil, map[string]string{"copy": "a"}, kubectl, ours)},
		{name: "it fails, absent, with a default: the default", rules: defaulted, obj: obj("ns", "x", nil, nil, kubectl),
			want: patch.Change{Labels: map[string]*string{"copy": ptr.To("none")}}},
		{name: "it fails, absent, no default: nothing", rules: copied, obj: obj("ns", "x", nil, nil, kubectl)},
		{name: "it fails, someone else's: kept", rules: defaulted,
			obj: obj("ns", "x", nil, map[string]string{"copy": "theirs"}, entry("kubectl", nil, []string{"copy"}))},
		{name: "the source is missing, ours: pruned", rules: read, obj: obj("ns", "x", nil, map[string]string{"copy": "a"}, kubectl, ours),
			want: patch.Change{Labels: map[string]*string{"copy": nil}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := target(t, tc.rules)
			before := testutil.MustJSON(tc.obj)
			d, err := Decide(tg, tc.obj, nil, FieldManager)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Change, tc.want) {
				t.Errorf("Change = %s, want %s", testutil.MustJSON(d.Change), testutil.MustJSON(tc.want))
			}
			if testutil.MustJSON(tc.obj) != before {
				t.Errorf("Decide modified the object")
			}
			// The evaluation is shared: deciding held keys leaves it as it was.
			if again, _ := Decide(tg, obj("ns", "y", nil, nil, kubectl), nil, FieldManager); tc.rules == defaulted &&
				again.Change.Labels["copy"] == nil {
				t.Errorf("after a held key, an object lacking it no longer gets the default: %s", testutil.MustJSON(again.Change))
			}
		})
	}
}
