package reconcile

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// TestDecideOptOutLocked checks that an object that opts out, or whose
// namespace does, still gets what the rules with allowOptOut: false want,
// and nothing else: no other rule's key is set, changed or pruned.
func TestDecideOptOutLocked(t *testing.T) {
	const rulesFile = "rules:\n- {name: psa, resources: [configmaps], allowOptOut: false, labels: {enforce: baseline}}\n" +
		"- {name: team, resources: [configmaps], annotations: {team: a}}\n"
	const open = "rules:\n- {name: team, resources: [configmaps], annotations: {team: a}}\n"
	ignore := map[string]string{rulefile.IgnoreAnnotation: "true"}
	ignoreOld := map[string]string{rulefile.IgnoreAnnotation: "true", "old": "x", "team": "b"}
	ours := entry(FieldManager, []string{"old"}, nil)
	tests := []struct {
		name      string
		rules     string
		obj       patch.Object
		nsIgnored bool
		want      patch.Change
	}{
		{name: "opts out: the locked rule applies", rules: rulesFile, obj: obj("ns", "x", ignore, nil, kubectl),
			want: patch.Change{Labels: map[string]*string{"enforce": ptr.To("baseline")}}},
		{name: "its namespace opts out: the locked rule applies", rules: rulesFile, obj: obj("ns", "x", nil, nil, kubectl), nsIgnored: true,
			want: patch.Change{Labels: map[string]*string{"enforce": ptr.To("baseline")}}},
		{name: "opts out: other keys are neither changed nor pruned", rules: rulesFile,
			obj:  obj("ns", "x", ignoreOld, map[string]string{"enforce": "privileged"}, kubectl, ours),
			want: patch.Change{Labels: map[string]*string{"enforce": ptr.To("baseline")}}},
		{name: "opts out, as the locked rule wants: nothing", rules: rulesFile,
			obj: obj("ns", "x", ignoreOld, map[string]string{"enforce": "baseline"}, kubectl, ours)},
		{name: "no locked rule: left alone", rules: open, obj: obj("ns", "x", ignoreOld, nil, kubectl, ours)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := &metav1.ObjectMeta{Name: "ns"}
			if tc.nsIgnored {
				ns.Annotations = map[string]string{rulefile.IgnoreAnnotation: "true"}
			}
			d, err := Decide(target(t, tc.rules), tc.obj, source.Namespaces(func(string) (metav1.Object, bool) { return ns, true }), FieldManager)
			if err != nil {
				t.Fatal(err)
			}
			if d.Ignored == "" {
				t.Errorf("Ignored is empty; the object opts out")
			}
			if !reflect.DeepEqual(d.Change, tc.want) {
				t.Errorf("Change = %s, want %s", testutil.MustJSON(d.Change), testutil.MustJSON(tc.want))
			}
		})
	}
}
