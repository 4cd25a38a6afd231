package rules_test

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// literalRules select ConfigMaps by label, name, namespace and a when
// condition, with literal values only, two of them in conflict and one in
// audit mode: a target whose evaluations are kept by the rules selecting.
const literalRules = `rules:
- {name: web, resources: [configmaps], selector: app=web, labels: {tier: frontend}, annotations: {team: a}}
- {name: db, resources: [configmaps], selector: app=db, labels: {tier: backend}}
- {name: named, resources: [configmaps], names: ['cm-1*'], annotations: {team: b, numbered: "true"}}
- {name: prod, resources: [configmaps], namespaces: [prod], labels: {env: prod}, annotations: {owner: {value: ops, ifAbsent: true}}}
- {name: big, resources: [configmaps], when: "object.metadata.name.size() > 5", annotations: {long: "true"}}
- {name: seen, resources: [configmaps], mode: audit, selector: app, annotations: {audited: "true"}}
`

// readingRule selects no object and reads a value: with it, the target
// evaluates every object afresh, which the test compares with.
const readingRule = "- {name: reader, resources: [configmaps], names: [none], annotations: {copy: {jsonPath: '{.metadata.name}'}}}\n"

// TestEvaluateBySelection checks that a target whose rules want only
// literal values evaluates every object as one that evaluates each object
// afresh, and that objects selected by the same rules share one
// evaluation, from many goroutines at once.
func TestEvaluateBySelection(t *testing.T) {
	kept := rulestest.Compile(t, literalRules, rulestest.ConfigMaps).Targets[rulestest.ConfigMaps.GVR]
	afresh := rulestest.Compile(t, literalRules+readingRule, rulestest.ConfigMaps).Targets[rulestest.ConfigMaps.GVR]
	var objs []*unstructured.Unstructured
	for i, app := range []string{"", "web", "db", "cache"} {
		for _, ns := range []string{"prod", "dev", "kube-system"} {
			for _, name := range []string{"cm-1", "cm-10", "x", "cm-2"} {
				u := &unstructured.Unstructured{}
				u.SetNamespace(ns)
				u.SetName(name)
				if app != "" {
					u.SetLabels(map[string]string{"app": app, "n": fmt.Sprint(i)})
				}
				objs = append(objs, u)
			}
		}
	}
	var wg sync.WaitGroup
	got := make([]*rules.Evaluation, len(objs))
	for i, o := range objs {
		wg.Go(func() { got[i] = kept.Evaluate(o, nil) })
	}
	wg.Wait()
	for i, o := range objs {
		want := afresh.Evaluate(o, nil)
		if !sameEvaluation(got[i], want) {
			t.Errorf("%s/%s %v: Evaluate() = %+v, want %+v", o.GetNamespace(), o.GetName(), o.GetLabels(), got[i], want)
		}
	}
	a, b := objs[12], objs[13] // app: web in prod, cm-1 and cm-10: the same rules select both
	if kept.Evaluate(a, nil) != kept.Evaluate(b, nil) {
		t.Errorf("objects selected by the same rules do not share an evaluation")
	}
	if e := kept.Evaluate(a, nil); e.RuleFor("label", "tier") != "web" || e.RuleFor("annotation", "team") != "web" || len(e.Conflicts) != 1 {
		t.Errorf("Evaluate(%s) = %+v; want tier and team set by web, team also wanted by named", a.GetName(), e)
	}
}

// celRules select ConfigMaps by when conditions and compute values in
// CEL, from the object, from its namespace, with a default, with an
// error on some objects and a value no label may hold on others, one
// in conflict with a literal rule and one in audit mode.
const celRules = `rules:
- {name: tier, resources: [configmaps], when: "has(object.data) && 'tier' in object.data", labels: {tier: {cel: "object.data.tier"}}}
- {name: size, resources: [configmaps], labels: {size: {cel: "has(object.data) && object.data.size() > 1 ? 'big' : 'small'"}}}
- {name: env, resources: [configmaps], annotations: {env: {cel: "namespaceObject.metadata.labels.env"}}}
- {name: where, resources: [configmaps], annotations: {where: {cel: "object.metadata.namespace + '/' + object.metadata.name"}}}
- {name: fixed, resources: [configmaps], selector: app=web, labels: {tier: frontend}}
- {name: app, resources: [configmaps], annotations: {app: {cel: "object.metadata.labels.app", default: none}}}
- {name: seen, resources: [configmaps], mode: audit, annotations: {seen: {cel: "object.metadata.labels.other"}}}
`

// TestEvaluateCELBySelection checks that a target whose rules compute
// values in CEL evaluates every object as one that evaluates each object
// afresh, and that objects selected by the same rules whose values yield
// the same share one evaluation, from many goroutines at once.
func TestEvaluateCELBySelection(t *testing.T) {
	kept := rulestest.Compile(t, celRules, rulestest.ConfigMaps).Targets[rulestest.ConfigMaps.GVR]
	afresh := rulestest.Compile(t, celRules+readingRule, rulestest.ConfigMaps).Targets[rulestest.ConfigMaps.GVR]
	namespaces := source.Namespaces(func(name string) (metav1.Object, bool) {
		return &metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": name + "-env"}}, name != "gone"
	})
	var objs []*unstructured.Unstructured
	for _, data := range []map[string]any{nil, {"tier": "db"}, {"tier": "db", "x": "y"}, {"tier": "not a label!"}, {"tier": int64(1)}} {
		for _, ns := range []string{"prod", "dev", "gone"} {
			for _, lbls := range []map[string]string{nil, {"app": "web"}, {"other": "x"}, {"x": "1"}} {
				for _, name := range []string{"a", "b"} {
					u := &unstructured.Unstructured{Object: map[string]any{}}
					u.SetNamespace(ns)
					u.SetName(name)
					u.SetLabels(lbls)
					if data != nil {
						u.Object["data"] = data
					}
					objs = append(objs, u)
				}
			}
		}
	}
	var wg sync.WaitGroup
	got := make([]*rules.Evaluation, 2*len(objs))
	for i := range got {
		wg.Go(func() { got[i] = kept.Evaluate(objs[i%len(objs)], namespaces) })
	}
	wg.Wait()
	for i, ev := range got {
		o := objs[i%len(objs)]
		if want := afresh.Evaluate(o, namespaces); !sameEvaluation(ev, want) {
			t.Errorf("%s/%s %v %v: Evaluate() = %+v, want %+v", o.GetNamespace(), o.GetName(), o.GetLabels(), o.Object["data"], ev, want)
		}
	}
	a, b, other := objs[0], objs[0], objs[1] // the same object twice; b differs in name, and so in where
	if kept.Evaluate(a, namespaces) != kept.Evaluate(b, namespaces) {
		t.Errorf("evaluations of one object whose values yield the same are not shared")
	}
	if kept.Evaluate(a, namespaces) == kept.Evaluate(other, namespaces) {
		t.Errorf("objects whose values yield differently share an evaluation")
	}
}

// sameEvaluation reports whether a and b want the same of an object, by
// the same rules.
func sameEvaluation(a, b *rules.Evaluation) bool {
	names := func(cs []*rules.Compiled) (out []string) {
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	audited := func(as []rules.Audited) (out []string) {
		for _, x := range as {
			out = append(out, x.Rule.Name+fmt.Sprint(x.Desired))
		}
		return out
	}
	for kind, keys := range map[string][]string{
		"label":      slices.Concat(slices.Collect(maps.Keys(a.Labels)), slices.Collect(maps.Keys(b.Labels)), a.RemoveLabels, b.RemoveLabels),
		"annotation": slices.Concat(slices.Collect(maps.Keys(a.Annotations)), slices.Collect(maps.Keys(b.Annotations)), a.RemoveAnnotations, b.RemoveAnnotations),
	} {
		for _, k := range keys {
			if a.RuleFor(kind, k) != b.RuleFor(kind, k) || a.Defaulted(kind, k) != b.Defaulted(kind, k) {
				return false
			}
		}
	}
	return reflect.DeepEqual(a.Desired, b.Desired) && reflect.DeepEqual(a.Conflicts, b.Conflicts) &&
		reflect.DeepEqual(a.Problems, b.Problems) && reflect.DeepEqual(names(a.Selected), names(b.Selected)) &&
		reflect.DeepEqual(audited(a.Audited), audited(b.Audited))
}
