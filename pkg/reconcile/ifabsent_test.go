package reconcile

import (
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// TestDecideIfAbsent checks keys set only where absent: a present key is
// never changed, a key the controller added is its own — updated and
// pruned — until someone else changes it, and then it is theirs.
func TestDecideIfAbsent(t *testing.T) {
	const psa = "rules:\n- {name: psa, resources: [configmaps], labels: {enforce: {value: baseline, ifAbsent: true}}, annotations: {a: '1'}}\n"
	const unselected = "rules:\n- {name: psa, resources: [configmaps], names: [other], labels: {enforce: {value: baseline, ifAbsent: true}}}\n"
	const enforced = psa + "- {name: always, resources: [configmaps], labels: {enforce: baseline}}\n"
	const conflict = psa + "- {name: always, resources: [configmaps], names: [x], labels: {enforce: restricted}}\n"
	baseline := map[string]string{"enforce": "baseline"}
	privileged := map[string]string{"enforce": "privileged"}
	a1 := map[string]string{"a": "1"}
	ours := entry(FieldManager, []string{"a"}, []string{"enforce"})
	tests := []struct {
		name  string
		rules string
		obj   patch.Object
		want  patch.Change
	}{
		{name: "absent: added", rules: psa, obj: obj("ns", "x", a1, nil, kubectl),
			want: patch.Change{Labels: map[string]*string{"enforce": ptr.To("baseline")}}},
		{name: "present, someone else's: kept", rules: psa,
			obj: obj("ns", "x", a1, privileged, entry("kubectl", nil, []string{"enforce"}))},
		{name: "present with our value, someone else's: kept", rules: psa,
			obj: obj("ns", "x", a1, baseline, entry("kubectl", nil, []string{"enforce"}))},
		{name: "ours, as the rule wants: no write", rules: psa, obj: obj("ns", "x", a1, baseline, kubectl, ours)},
		{name: "ours, another value (the rule changed): updated", rules: psa,
			obj:  obj("ns", "x", a1, privileged, kubectl, ours),
			want: patch.Change{Labels: map[string]*string{"enforce": ptr.To("baseline")}}},
		{name: "ours, no rule selects the object: pruned", rules: unselected,
			obj:  obj("ns", "x", nil, baseline, kubectl, ours),
			want: patch.Change{Labels: map[string]*string{"enforce": nil}}},
		{name: "someone else's, no rule selects the object: kept", rules: unselected,
			obj: obj("ns", "x", nil, privileged, entry("kubectl", nil, []string{"enforce"}))},
		{name: "set at admission, as the rule wants: no write", rules: psa,
			obj: obj("ns", "x", map[string]string{"a": "1", marker: "a,label:enforce"}, baseline, kubectl)},
		{name: "set at admission, changed since: unmarked, kept", rules: psa,
			obj:  obj("ns", "x", map[string]string{"a": "1", marker: "a,label:enforce"}, privileged, kubectl),
			want: patch.Change{Annotations: map[string]*string{marker: ptr.To("a")}}},
		{name: "set at admission alone, changed since: marker deleted", rules: psa,
			obj:  obj("ns", "x", map[string]string{"a": "1", marker: "label:enforce"}, privileged, kubectl, entry(FieldManager, []string{"a"}, nil)),
			want: patch.Change{Annotations: map[string]*string{marker: nil}}},
		{name: "a later rule always sets the same value: overwritten", rules: enforced,
			obj:  obj("ns", "x", a1, privileged, kubectl),
			want: patch.Change{Labels: map[string]*string{"enforce": ptr.To("baseline")}}},
		{name: "a later rule wants another value: file order decides, kept", rules: conflict,
			obj: obj("ns", "x", a1, privileged, kubectl)},
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
