package reconcile

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestCoverage checks the state Coverage gives each key a selecting rule
// sets or removes, and the reason Why gives for a key a rule could not
// compute.
func TestCoverage(t *testing.T) {
	const team = "rules:\n- {name: team, resources: [configmaps], labels: {team: {fromNamespace: {label: team}, ifAbsent: true}}}\n"
	const invalid = "rules:\n- {name: v, resources: [configmaps], labels: {v: {cel: \"'not valid!'\"}}}\n"
	const failed = "rules:\n- {name: f, resources: [configmaps], labels: {copy: {cel: \"object.metadata.labels['src']\"}}}\n"
	const audit = "rules:\n- {name: au, resources: [configmaps], mode: audit, annotations: {a: '1'}, removeAnnotations: [gone]}\n"
	const locked = "rules:\n- {name: psa, resources: [configmaps], allowOptOut: false, labels: {enforce: baseline}}\n" +
		"- {name: owner, resources: [configmaps], annotations: {owner: a}}\n"
	const creator = "rules:\n- {name: creator, resources: [configmaps], annotations: {by: {cel: request.userInfo.username, once: true, default: unknown}}}\n"
	payments := map[string]string{"team": "payments"}
	ignore := map[string]string{rulefile.IgnoreAnnotation: "true"}
	theirs := entry("kubectl", nil, []string{"team"})
	tests := []struct {
		name     string
		rules    string
		nsLabels map[string]string
		obj      patch.Object
		changed  string
		want     []string // rule/kind/key=state, sorted
		why      string
	}{
		{name: "carries the value: compliant", rules: team, nsLabels: payments, obj: obj("ns", "x", nil, payments, kubectl),
			want: []string{"team/label/team=compliant"}},
		{name: "lacks it: pending", rules: team, nsLabels: payments, obj: obj("ns", "x", nil, nil, kubectl),
			want: []string{"team/label/team=pending"}},
		{name: "lacks it, writes held back: fighting", rules: team, nsLabels: payments, obj: obj("ns", "x", nil, nil, kubectl), changed: StateFighting,
			want: []string{"team/label/team=fighting"}},
		{name: "lacks it, written: compliant", rules: team, nsLabels: payments, obj: obj("ns", "x", nil, nil, kubectl), changed: StateCompliant,
			want: []string{"team/label/team=compliant"}},
		{name: "ifAbsent, another manager's value: foreign", rules: team, nsLabels: payments,
			obj: obj("ns", "x", nil, map[string]string{"team": "search"}, theirs), want: []string{"team/label/team=foreign"}},
		{name: "the namespace lacks the label: source-missing", rules: team, obj: obj("ns", "x", nil, nil, kubectl),
			want: []string{"team/label/team=source-missing"}, why: `fromNamespace: namespace "ns" has no label "team"`},
		{name: "not a label value: invalid", rules: invalid, obj: obj("ns", "x", nil, nil, kubectl), want: []string{"v/label/v=invalid"}},
		{name: "the expression fails: error", rules: failed, obj: obj("ns", "x", nil, nil, kubectl), want: []string{"f/label/copy=error"}},
		{name: "audit: pending and compliant", rules: audit, obj: obj("ns", "x", nil, nil, kubectl),
			want: []string{"au/annotation/a=pending", "au/annotation/gone=compliant"}},
		{name: "the default for want of the request: unrecorded", rules: creator, obj: obj("ns", "x", map[string]string{"by": "unknown"}, nil, kubectl),
			want: []string{"creator/annotation/by=unrecorded"}},
		{name: "recorded from the request: compliant", rules: creator, obj: obj("ns", "x", map[string]string{"by": "alice"}, nil, kubectl),
			want: []string{"creator/annotation/by=compliant"}},
		{name: "the default not yet written: pending", rules: creator, obj: obj("ns", "x", nil, nil, kubectl),
			want: []string{"creator/annotation/by=pending"}},
		{name: "opts out: opted-out, but for a locked rule", rules: locked, obj: obj("ns", "x", ignore, nil, kubectl),
			want: []string{"owner/annotation/owner=opted-out", "psa/label/enforce=pending"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := &metav1.ObjectMeta{Name: "ns", Labels: tc.nsLabels}
			look := source.Namespaces(func(string) (metav1.Object, bool) { return ns, true })
			d, err := Decide(target(t, tc.rules), tc.obj, look, FieldManager)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			why := ""
			d.Coverage(tc.obj, cmp.Or(tc.changed, StatePending), func(s KeyState) {
				got = append(got, s.Rule+"/"+s.Kind+"/"+s.Key+"="+s.State)
				why = cmp.Or(why, d.Why(s))
			})
			slices.Sort(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Coverage = %q, want %q", got, tc.want)
			}
			if !strings.Contains(why, tc.why) {
				t.Errorf("Why = %q, want %q", why, tc.why)
			}
		})
	}
}

// sorted yields every key once, in order, however many there are, and
// stops when told to; up to sortOnStack keys it allocates nothing.
func TestSorted(t *testing.T) {
	for _, n := range []int{0, 1, 2, sortOnStack, sortOnStack + 1, 3 * sortOnStack} {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("key-%03d", n-i)] = fmt.Sprint(n - i)
		}
		var got []string
		for k, v := range sorted(m) {
			if m[k] != v {
				t.Errorf("%d keys: %s yielded with %q, want %q", n, k, v, m[k])
			}
			got = append(got, k)
		}
		if want := slices.Sorted(maps.Keys(m)); !slices.Equal(got, want) {
			t.Errorf("%d keys: yielded %v, want %v", n, got, want)
		}
		stopped := 0
		for range sorted(m) {
			stopped++
			break
		}
		if want := min(n, 1); stopped != want {
			t.Errorf("%d keys: %d yielded before the loop stopped, want %d", n, stopped, want)
		}
		if n <= sortOnStack {
			if a := testing.AllocsPerRun(10, func() {
				for range sorted(m) {
				}
			}); a != 0 {
				t.Errorf("%d keys: %v allocations, want 0", n, a)
			}
		}
	}
}
