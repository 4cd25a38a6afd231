package rules_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func TestExplain(t *testing.T) {
	set := rulestest.Compile(t, `rules:
- {name: sel, resources: [configmaps], selector: app=web, annotations: {a: '1'}}
- {name: names, resources: [configmaps], names: ["db-*"], annotations: {b: '2'}}
- {name: ns, resources: [configmaps], namespaces: ["prod-*"], annotations: {c: '3'}}
- {name: excl, resources: [configmaps], excludeNamespaces: ["prod-*"], annotations: {d: '4'}}
- {name: nssel, resources: [configmaps], namespaceSelector: env=dev, removeLabels: [old]}
- {name: audit, resources: [configmaps], mode: audit, labels: {tier: web}}
`, served...)
	if err := set.ExcludeNamespaces([]string{"kube-*"}); err != nil {
		t.Fatal(err)
	}
	tg := set.Targets[cmGVR]
	tests := []struct {
		name string
		ns   string
		lbls map[string]string
		// want is, rule by rule, "" when it selects, else a part of the reason.
		want []string
	}{
		{"prod, labelled", "prod-1", map[string]string{"app": "web"}, []string{
			"", `names ["db-*"] do not match "x"`, "", `excludeNamespaces ["prod-*"] match namespace "prod-1"`,
			`namespaceSelector "env=dev" does not match the labels of namespace "prod-1"`, ""}},
		{"dev, unlabelled", "dev-1", nil, []string{
			`selector "app=web" does not match`, "names", `namespaces ["prod-*"] do not match namespace "dev-1"`, "", "", ""}},
		{"unknown namespace", "other", nil, []string{
			"selector", "names", "namespaces", "", `namespace "other" is not known`, ""}},
		{"excluded from every rule", "kube-system", map[string]string{"app": "web"}, []string{
			`the namespaces excluded from every rule ("kube-*") leave out namespace "kube-system"`, "excluded from every rule",
			"excluded from every rule", "excluded from every rule", "excluded from every rule", "excluded from every rule"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tg.Explain(obj(tc.ns, "x", tc.lbls), source.Namespaces(nsLabels))
			if len(got) != len(tc.want) {
				t.Fatalf("%d verdicts, want %d", len(got), len(tc.want))
			}
			for i, v := range got {
				if v.Selects != (tc.want[i] == "") || !strings.Contains(v.Reason, tc.want[i]) {
					t.Errorf("rule %s: selects %v, reason %q; want reason containing %q", v.Rule, v.Selects, v.Reason, tc.want[i])
				}
				if v.Selects && len(v.Wants) == 0 {
					t.Errorf("rule %s selects but wants nothing", v.Rule)
				}
				if want := tc.ns == "kube-system"; (v.Excluded != nil) != want {
					t.Errorf("rule %s: excluded %+v, want it set: %v", v.Rule, v.Excluded, want)
				}
			}
			if got[5].Mode != rulefile.ModeAudit || got[0].Mode != rulefile.ModeEnforce {
				t.Errorf("modes %q, %q; want audit and enforce", got[5].Mode, got[0].Mode)
			}
		})
	}
}

func TestExplainWants(t *testing.T) {
	tg := rulestest.Compile(t, `rules:
- {name: r, resources: [configmaps], annotations: {z: '1', owner: {jsonPath: '{.spec.owner}'}}, removeAnnotations: [a], labels: {l: v, psa: {value: baseline, ifAbsent: true}}}
`, served...).Targets[cmGVR]
	got := tg.Explain(obj("ns", "x", nil), nil)[0].Wants
	var s []string
	for _, w := range got {
		v := "-"
		if w.Value != nil {
			v = *w.Value
		}
		if w.IfAbsent {
			v += " (if absent)"
		}
		s = append(s, w.Kind+" "+w.Key+"="+v)
	}
	want := "annotation a=- annotation owner=ops annotation z=1 label l=v label psa=baseline (if absent)"
	if strings.Join(s, " ") != want {
		t.Errorf("wants %q, want %q", strings.Join(s, " "), want)
	}
}

func TestEvaluateAudit(t *testing.T) {
	tg := rulestest.Compile(t, `rules:
- {name: enforced, resources: [configmaps], annotations: {a: '1'}}
- {name: audited, resources: [configmaps], mode: audit, annotations: {b: '2'}, removeLabels: [old]}
`, served...).Targets[cmGVR]
	ev := tg.Evaluate(obj("ns", "x", nil), nil)
	if _, ok := ev.Desired.Annotations["b"]; ok || len(ev.Desired.RemoveLabels) > 0 {
		t.Errorf("Desired = %+v: an audit rule's keys must not be in it", ev.Desired)
	}
	if len(ev.Audited) != 1 || ev.Audited[0].Rule.Name != "audited" || ev.Audited[0].Desired.Annotations["b"] != "2" {
		t.Errorf("Audited = %+v, want what rule audited wants", ev.Audited)
	}
	if len(ev.Selected) != 2 {
		t.Errorf("Selected = %d rules, want 2", len(ev.Selected))
	}
	if ev.RuleFor("annotation", "a") != "enforced" {
		t.Errorf("RuleFor(a) = %q, want enforced", ev.RuleFor("annotation", "a"))
	}
}

func TestIgnored(t *testing.T) {
	tg := rulestest.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n", served...).Targets[cmGVR]
	off := source.Namespaces(func(ns string) (metav1.Object, bool) {
		return &metav1.ObjectMeta{Name: ns, Annotations: map[string]string{rulefile.IgnoreAnnotation: "true"}}, ns == "quiet"
	})
	tests := []struct {
		name, ns, value string
		nsIgnored       source.Lookup
		want            string
	}{
		{"object opts out", "ns", "true", nil, "the object carries"},
		{"only \"true\" opts out", "ns", "yes", off, ""},
		{"namespace opts out", "quiet", "", off, `namespace "quiet" carries`},
		{"other namespace", "loud", "", off, ""},
		{"no namespace lookup", "quiet", "", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := obj(tc.ns, "x", nil)
			if tc.value != "" {
				o.SetAnnotations(map[string]string{rulefile.IgnoreAnnotation: tc.value})
			}
			got := tg.Ignored(o, tc.nsIgnored)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Ignored() = %q, want %q", got, tc.want)
			}
		})
	}
}
