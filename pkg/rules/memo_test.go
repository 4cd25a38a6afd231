package rules_test

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
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
	for _, k := range []string{"tier", "env"} {
		if a.RuleFor("label", k) != b.RuleFor("label", k) {
			return false
		}
	}
	for _, k := range []string{"team", "numbered", "owner", "long", "audited"} {
		if a.RuleFor("annotation", k) != b.RuleFor("annotation", k) {
			return false
		}
	}
	return reflect.DeepEqual(a.Desired, b.Desired) && reflect.DeepEqual(a.Conflicts, b.Conflicts) &&
		reflect.DeepEqual(a.Problems, b.Problems) && reflect.DeepEqual(names(a.Selected), names(b.Selected)) &&
		reflect.DeepEqual(audited(a.Audited), audited(b.Audited))
}
