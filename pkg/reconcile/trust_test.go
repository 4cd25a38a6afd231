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

func TestDecideIgnoreAndAudit(t *testing.T) {
	const enforced = "rules:\n- {name: e, resources: [configmaps], annotations: {a: '1'}}\n"
	const audited = "rules:\n- {name: au, resources: [configmaps], mode: audit, annotations: {a: '1'}, removeAnnotations: [gone]}\n"
	optOut := map[string]string{rulefile.IgnoreAnnotation: "true", "old": "o"}
	quiet := source.Namespaces(func(ns string) (metav1.Object, bool) {
		return &metav1.ObjectMeta{Name: ns, Annotations: map[string]string{rulefile.IgnoreAnnotation: "true"}}, ns == "quiet"
	})
	tests := []struct {
		name        string
		rules       string
		obj         patch.Object
		wantIgnored bool
		want        patch.Change
		wantAudit   []AuditChange
	}{
		{name: "object opts out: even our keys stay", rules: enforced,
			obj: obj("ns", "x", optOut, nil, entry(FieldManager, []string{"old"}, nil)), wantIgnored: true},
		{name: "namespace opts out", rules: enforced, obj: obj("quiet", "x", nil, nil, kubectl), wantIgnored: true},
		{name: "\"false\" does not opt out", rules: enforced,
			obj:  obj("ns", "x", map[string]string{rulefile.IgnoreAnnotation: "false"}, nil, kubectl),
			want: patch.Change{Annotations: map[string]*string{"a": ptr.To("1")}}},
		{name: "audit rule: nothing written, its change reported", rules: audited,
			obj:       obj("ns", "x", map[string]string{"gone": "g"}, nil, kubectl),
			wantAudit: []AuditChange{{Rule: "au", Change: patch.Change{Annotations: map[string]*string{"a": ptr.To("1"), "gone": nil}}}}},
		{name: "audit rule: a key we own that it wants is not pruned", rules: audited,
			obj: obj("ns", "x", map[string]string{"a": "1"}, nil, entry(FieldManager, []string{"a"}, nil))},
		{name: "audit rule satisfied: nothing to report", rules: audited,
			obj: obj("ns", "x", map[string]string{"a": "1"}, nil, kubectl)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(target(t, tc.rules), tc.obj, quiet, FieldManager)
			if err != nil {
				t.Fatal(err)
			}
			if (d.Ignored != "") != tc.wantIgnored {
				t.Errorf("Ignored = %q, want ignored %v", d.Ignored, tc.wantIgnored)
			}
			if !reflect.DeepEqual(d.Change, tc.want) || (len(d.Requests) > 0) != !tc.want.Empty() {
				t.Errorf("Change = %s (%d requests), want %s", testutil.MustJSON(d.Change), len(d.Requests), testutil.MustJSON(tc.want))
			}
			if !reflect.DeepEqual(d.Audit, tc.wantAudit) {
				t.Errorf("Audit = %s, want %s", testutil.MustJSON(d.Audit), testutil.MustJSON(tc.wantAudit))
			}
		})
	}
}

func TestExplainObject(t *testing.T) {
	tg := target(t, `rules:
- {name: one, resources: [configmaps], annotations: {team: a}}
- {name: two, resources: [configmaps], names: ["x*"], annotations: {team: b}, removeAnnotations: [legacy]}
- {name: three, resources: [configmaps], names: [other], annotations: {x: '1'}}
`)
	o := obj("ns", "x", map[string]string{"team": "z", "legacy": "l", "stale": "s"}, map[string]string{"app": "web"},
		entry("kubectl", []string{"team", "legacy"}, []string{"app"}), entry(FieldManager, []string{"stale"}, nil),
		entry("helm", []string{"team"}, nil))
	x, err := Explain(tg, o, nil, FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	want := Explanation{
		Rules: tg.Explain(o, nil),
		Keys: []OwnedKey{
			{Kind: "annotation", Key: "legacy", Value: "l", Owners: []string{"kubectl"}},
			{Kind: "annotation", Key: "stale", Value: "s", Owners: []string{FieldManager}},
			{Kind: "annotation", Key: "team", Value: "z", Owners: []string{"helm", "kubectl"}},
			{Kind: "label", Key: "app", Value: "web", Owners: []string{"kubectl"}},
		},
		Conflicts: []Conflict{{Kind: "annotation", Key: "team", Kept: "one", Dropped: "two"}},
		Changes: []KeyChange{
			{Kind: "annotation", Key: "legacy", Old: ptr.To("l"), Rule: "two"},
			{Kind: "annotation", Key: "stale", Old: ptr.To("s")},
			{Kind: "annotation", Key: "team", Old: ptr.To("z"), New: ptr.To("a"), Rule: "one"},
		},
	}
	if !reflect.DeepEqual(x, want) {
		t.Errorf("Explain() =\n%s\nwant\n%s", testutil.MustJSON(x), testutil.MustJSON(want))
	}
	if x.Rules[2].Selects || x.Rules[2].Reason == "" {
		t.Errorf("rule three: %+v, want not selected, with a reason", x.Rules[2])
	}
}
