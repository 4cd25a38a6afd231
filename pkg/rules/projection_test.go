package rules_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

func TestProjection(t *testing.T) {
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	nss := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	tests := []struct {
		name      string
		rules     string
		gvr       schema.GroupVersionResource
		whole     bool
		anns, lbl []string
	}{
		{name: "literal annotation", gvr: cms,
			rules: "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n",
			anns:  []string{"a"}},
		{name: "set and removed, annotations and labels", gvr: cms,
			rules: "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}, labels: {l: x}, removeAnnotations: [old], removeLabels: [legacy]}\n",
			anns:  []string{"a", "old"}, lbl: []string{"l", "legacy"}},
		{name: "a selector reads the label keys it names, whatever the operator", gvr: cms,
			rules: "rules:\n- {name: r, resources: [configmaps], selector: 'app=web,tier in (a,b),!canary,env notin (dev),track', annotations: {a: '1'}}\n",
			anns:  []string{"a"}, lbl: []string{"app", "tier", "canary", "env", "track"}},
		{name: "several rules: the union", gvr: cms,
			rules: "rules:\n- {name: one, resources: [configmaps], selector: app=web, annotations: {team: a}}\n" +
				"- {name: two, resources: [configmaps], names: ['x*'], namespaces: [prod-*], annotations: {team: b, tier: '1'}}\n",
			anns: []string{"team", "tier"}, lbl: []string{"app"}},
		{name: "names and namespace globs read no key", gvr: cms,
			rules: "rules:\n- {name: r, resources: [configmaps], names: ['db-*'], excludeNamespaces: [dev], annotations: {a: '1'}}\n",
			anns:  []string{"a"}},
		{name: "a namespace selector reads the namespace's labels, not the object's", gvr: cms,
			rules: "rules:\n- {name: r, resources: [configmaps, namespaces], namespaceSelector: team=a, annotations: {a: '1'}}\n",
			anns:  []string{"a"}},
		{name: "a Namespace is selected by its own labels", gvr: nss,
			rules: "rules:\n- {name: r, resources: [configmaps, namespaces], namespaceSelector: 'team=a,!frozen', annotations: {a: '1'}}\n",
			anns:  []string{"a"}, lbl: []string{"team", "frozen"}},
		{name: "keys set from the namespace", gvr: cms,
			rules: "rules:\n- {name: r, resources: [configmaps], annotations: {cost: {fromNamespace: {annotation: example.com/cost}}}, labels: {team: {fromNamespace: {label: team}}}}\n",
			anns:  []string{"cost"}, lbl: []string{"team"}},
		{name: "a Namespace reads its own keys with fromNamespace", gvr: nss,
			rules: "rules:\n- {name: r, resources: [namespaces], annotations: {cost: {fromNamespace: {annotation: example.com/cost}}}, labels: {owner: {fromNamespace: {label: team}}}}\n",
			anns:  []string{"cost", "example.com/cost"}, lbl: []string{"owner", "team"}},
		{name: "a JSONPath rule reads the whole object", gvr: cms, whole: true,
			rules: "rules:\n- {name: r, resources: [configmaps], labels: {owner: {jsonPath: '{.data.owner}'}}}\n" +
				"- {name: s, resources: [configmaps], annotations: {a: '1'}}\n",
			anns: []string{"a"}, lbl: []string{"owner"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := rulestest.Compile(t, tc.rules, served...).Targets[tc.gvr].Projection()
			// Every object may opt out: the control annotations are read.
			want := projection.Projection{Whole: tc.whole, Annotations: sets.New(tc.anns...).Insert(rules.ControlAnnotations...), Labels: sets.New(tc.lbl...)}
			if got.Whole != want.Whole || !got.Annotations.Equal(want.Annotations) || !got.Labels.Equal(want.Labels) {
				t.Errorf("Projection() = whole %v, annotations %v, labels %v; want whole %v, annotations %v, labels %v",
					got.Whole, sets.List(got.Annotations), sets.List(got.Labels), want.Whole, sets.List(want.Annotations), sets.List(want.Labels))
			}
			if !got.Equal(want) {
				t.Errorf("Projection().Equal(%+v) = false", want)
			}
		})
	}
}

// Reads leaves out the keys the rules only set.
func TestReads(t *testing.T) {
	tg := rulestest.Compile(t, "rules:\n- {name: r, resources: [configmaps], selector: app=web, annotations: {a: '1'}, labels: {l: x}, removeAnnotations: [old], removeLabels: [legacy]}\n", served...).
		Targets[schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}]
	got := tg.Reads()
	wantAnns, wantLbls := sets.New("old").Insert(rules.ControlAnnotations...), sets.New("app", "legacy")
	if got.Whole || !got.Annotations.Equal(wantAnns) || !got.Labels.Equal(wantLbls) {
		t.Errorf("Reads() = annotations %v, labels %v; want %v, %v", sets.List(got.Annotations), sets.List(got.Labels), sets.List(wantAnns), sets.List(wantLbls))
	}
	if !tg.Projection().Covers(got) {
		t.Errorf("Projection() does not cover Reads()")
	}
}

func TestProjectionCovers(t *testing.T) {
	p := func(whole bool, anns, lbls []string) projection.Projection {
		return projection.Projection{Whole: whole, Annotations: sets.New(anns...), Labels: sets.New(lbls...)}
	}
	ab := p(false, []string{"a", "b"}, []string{"l"})
	tests := []struct {
		name       string
		p, q       projection.Projection
		want, back bool // p.Covers(q), q.Covers(p)
	}{
		{"same keys", ab, p(false, []string{"b", "a"}, []string{"l"}), true, true},
		{"fewer keys", ab, p(false, []string{"a"}, nil), true, false},
		{"an annotation more", ab, p(false, []string{"a", "b", "c"}, []string{"l"}), false, true},
		{"a label more", ab, p(false, []string{"a"}, []string{"l", "m"}), false, false},
		{"same key, other kind", p(false, []string{"a"}, nil), p(false, nil, []string{"a"}), false, false},
		{"whole covers any", p(true, nil, nil), ab, true, false},
		{"whole and whole", p(true, nil, nil), p(true, []string{"a"}, nil), true, true},
		{"nothing", p(false, nil, nil), p(false, nil, nil), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Covers(tc.q); got != tc.want {
				t.Errorf("p.Covers(q) = %v, want %v", got, tc.want)
			}
			if got := tc.q.Covers(tc.p); got != tc.back {
				t.Errorf("q.Covers(p) = %v, want %v", got, tc.back)
			}
			if got := tc.p.Equal(tc.q); got != (tc.want && tc.back) {
				t.Errorf("p.Equal(q) = %v, want %v", got, tc.want && tc.back)
			}
		})
	}
}
