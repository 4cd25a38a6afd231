package rules_test

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

var (
	podsGVR     = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deployGVR   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	frigatesGVR = schema.GroupVersionResource{Group: "ship.nwiizo.dev", Version: "v1", Resource: "frigates"}
)

// fakeResolve resolves names as a small cluster's discovery would, including
// several names for one resource; any other name is an error.
func fakeResolve(name string) (source.Resource, error) {
	known := map[string]source.Resource{
		"pods":                     {GVR: podsGVR, Namespaced: true},
		"po":                       {GVR: podsGVR, Namespaced: true},
		"namespaces":               {GVR: nsGVR},
		"deployments":              {GVR: deployGVR, Namespaced: true},
		"deploy":                   {GVR: deployGVR, Namespaced: true},
		"deployments.v1.apps":      {GVR: deployGVR, Namespaced: true},
		"frigates.ship.nwiizo.dev": {GVR: frigatesGVR, Namespaced: true},
		"frigates.v2.ship.nwiizo.dev": {GVR: schema.GroupVersionResource{Group: "ship.nwiizo.dev", Version: "v2", Resource: "frigates"},
			Namespaced: true},
	}
	r, ok := known[name]
	if !ok {
		return source.Resource{}, fmt.Errorf("resource %q not found", name)
	}
	return r, nil
}

func mkRule(name string, resources []string, annotations map[string]string) rulefile.Rule {
	return rulefile.Rule{Name: name, Resources: resources, Annotations: rulefile.Metadata{Values: annotations}}
}

func TestCompile(t *testing.T) {
	team := func(v string) map[string]string { return map[string]string{"team": v} }
	tests := []struct {
		name           string
		rules          []rulefile.Rule
		wantTargets    map[schema.GroupVersionResource]*wantTarget
		wantUnresolved []rulefile.FieldError
		wantErr        []rulefile.FieldError // conflicts; when set, no Set is returned
	}{
		{
			name:        "no rules",
			rules:       nil,
			wantTargets: map[schema.GroupVersionResource]*wantTarget{},
		},
		{
			name:  "one rule, two resources",
			rules: []rulefile.Rule{mkRule("a", []string{"pods", "namespaces"}, team("web"))},
			wantTargets: map[schema.GroupVersionResource]*wantTarget{
				podsGVR: {Resource: source.Resource{GVR: podsGVR, Namespaced: true}, Rules: []string{"a"}, Annotations: team("web")},
				nsGVR:   {Resource: source.Resource{GVR: nsGVR}, Rules: []string{"a"}, Annotations: team("web")},
			},
		},
		{
			name: "two rules on one resource merge",
			rules: []rulefile.Rule{
				mkRule("a", []string{"pods"}, team("web")),
				mkRule("b", []string{"po"}, map[string]string{"tier": "1", "example.com/x": "y"}),
			},
			wantTargets: map[schema.GroupVersionResource]*wantTarget{
				podsGVR: {Resource: source.Resource{GVR: podsGVR, Namespaced: true}, Rules: []string{"a", "b"},
					Annotations: map[string]string{"team": "web", "tier": "1", "example.com/x": "y"}},
			},
		},
		{
			name: "one resource at two versions is one target, at the first version named",
			rules: []rulefile.Rule{
				mkRule("a", []string{"frigates.ship.nwiizo.dev"}, team("web")),
				mkRule("b", []string{"frigates.v2.ship.nwiizo.dev"}, map[string]string{"tier": "1"}),
			},
			wantTargets: map[schema.GroupVersionResource]*wantTarget{
				frigatesGVR: {Resource: source.Resource{GVR: frigatesGVR, Namespaced: true}, Rules: []string{"a", "b"},
					Annotations: map[string]string{"team": "web", "tier": "1"}},
			},
		},
		{
			name: "one resource at two versions with different values conflicts",
			rules: []rulefile.Rule{
				mkRule("a", []string{"frigates.ship.nwiizo.dev"}, team("web")),
				mkRule("b", []string{"frigates.v2.ship.nwiizo.dev"}, team("db")),
			},
			wantErr: []rulefile.FieldError{{Field: "rules[1].annotations.team",
				Message: `conflicts with rules[0] (a), which also applies to every object of frigates.v1.ship.nwiizo.dev: annotation "team" is "db" here (b) and "web" there`}},
		},
		{
			name:  "names for one resource in one rule give one target",
			rules: []rulefile.Rule{mkRule("a", []string{"deploy", "deployments", "deployments.v1.apps"}, team("web"))},
			wantTargets: map[schema.GroupVersionResource]*wantTarget{
				deployGVR: {Resource: source.Resource{GVR: deployGVR, Namespaced: true}, Rules: []string{"a"}, Annotations: team("web")},
			},
		},
		{
			name: "target rules in file order, each once",
			rules: []rulefile.Rule{
				mkRule("c", []string{"deployments", "deploy"}, team("web")),
				mkRule("a", []string{"pods"}, map[string]string{"x": "1"}),
				mkRule("b", []string{"pods", "deploy", "deployments"}, map[string]string{"y": "2"}),
			},
			wantTargets: map[schema.GroupVersionResource]*wantTarget{
				deployGVR: {Resource: source.Resource{GVR: deployGVR, Namespaced: true}, Rules: []string{"c", "b"},
					Annotations: map[string]string{"team": "web", "y": "2"}},
				podsGVR: {Resource: source.Resource{GVR: podsGVR, Namespaced: true}, Rules: []string{"a", "b"},
					Annotations: map[string]string{"x": "1", "y": "2"}},
			},
		},
		{
			name: "same key to the same value is not a conflict",
			rules: []rulefile.Rule{
				mkRule("a", []string{"deploy"}, team("web")),
				mkRule("b", []string{"deployments"}, team("web")),
			},
			wantTargets: map[schema.GroupVersionResource]*wantTarget{
				deployGVR: {Resource: source.Resource{GVR: deployGVR, Namespaced: true}, Rules: []string{"a", "b"}, Annotations: team("web")},
			},
		},
		{
			name: "same key, different values, different resources is not a conflict",
			rules: []rulefile.Rule{
				mkRule("a", []string{"pods"}, team("web")),
				mkRule("b", []string{"deploy"}, team("db")),
			},
			wantTargets: map[schema.GroupVersionResource]*wantTarget{
				podsGVR:   {Resource: source.Resource{GVR: podsGVR, Namespaced: true}, Rules: []string{"a"}, Annotations: team("web")},
				deployGVR: {Resource: source.Resource{GVR: deployGVR, Namespaced: true}, Rules: []string{"b"}, Annotations: team("db")},
			},
		},
		{
			name: "unresolved names are reported, the rest compile",
			rules: []rulefile.Rule{
				mkRule("a", []string{"pods", "podz"}, team("web")),
				mkRule("b", []string{"frigates", "frigates.ship.nwiizo.dev"}, team("web")),
			},
			wantTargets: map[schema.GroupVersionResource]*wantTarget{
				podsGVR:     {Resource: source.Resource{GVR: podsGVR, Namespaced: true}, Rules: []string{"a"}, Annotations: team("web")},
				frigatesGVR: {Resource: source.Resource{GVR: frigatesGVR, Namespaced: true}, Rules: []string{"b"}, Annotations: team("web")},
			},
			wantUnresolved: []rulefile.FieldError{
				{Field: "rules[0].resources[1]", Message: `resource "podz" not found`},
				{Field: "rules[1].resources[0]", Message: `resource "frigates" not found`},
			},
		},
		{
			name:           "nothing resolves",
			rules:          []rulefile.Rule{mkRule("a", []string{"x"}, team("web"))},
			wantTargets:    map[schema.GroupVersionResource]*wantTarget{},
			wantUnresolved: []rulefile.FieldError{{Field: "rules[0].resources[0]", Message: `resource "x" not found`}},
		},
		{
			name: "conflict names both rules",
			rules: []rulefile.Rule{
				mkRule("a", []string{"pods"}, map[string]string{"x": "1"}),
				mkRule("web", []string{"deploy"}, team("web")),
				mkRule("db", []string{"deployments", "nope"}, team("db")),
			},
			wantUnresolved: []rulefile.FieldError{{Field: "rules[2].resources[1]", Message: `resource "nope" not found`}},
			wantErr: []rulefile.FieldError{{Field: "rules[2].annotations.team",
				Message: `conflicts with rules[1] (web), which also applies to every object of deployments.v1.apps: annotation "team" is "db" here (db) and "web" there`}},
		},
		{
			name: "a conflict on every shared resource and key",
			rules: []rulefile.Rule{
				mkRule("a", []string{"pods", "deploy"}, map[string]string{"team": "web", "tier": "1"}),
				mkRule("b", []string{"po", "deploy"}, map[string]string{"team": "db", "tier": "1"}),
			},
			wantErr: []rulefile.FieldError{
				{Field: "rules[1].annotations.team", Message: `conflicts with rules[0] (a), which also applies to every object of pods.v1: annotation "team" is "db" here (b) and "web" there`},
				{Field: "rules[1].annotations.team", Message: `conflicts with rules[0] (a), which also applies to every object of deployments.v1.apps: annotation "team" is "db" here (b) and "web" there`},
			},
		},
		{
			name: "a conflict after an agreement names the first rule",
			rules: []rulefile.Rule{
				mkRule("a", []string{"pods"}, team("web")),
				mkRule("b", []string{"pods"}, team("web")),
				mkRule("c", []string{"pods"}, team("db")),
			},
			wantErr: []rulefile.FieldError{{Field: "rules[2].annotations.team",
				Message: `conflicts with rules[0] (a), which also applies to every object of pods.v1: annotation "team" is "db" here (c) and "web" there`}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, unresolved, err := rules.Compile("rules.yaml", &rulefile.File{Version: "v1", Rules: tc.rules}, fakeResolve)
			if !reflect.DeepEqual(unresolved, tc.wantUnresolved) {
				t.Errorf("unresolved = %+v, want %+v", unresolved, tc.wantUnresolved)
			}
			if tc.wantErr != nil {
				var rerr *rulefile.Error
				if !errors.As(err, &rerr) {
					t.Fatalf("error = %v (%T), want a *rulefile.Error", err, err)
				}
				if want := (rulefile.Error{File: "rules.yaml", Fields: tc.wantErr}); !reflect.DeepEqual(*rerr, want) {
					t.Errorf("error =\n%v\nwant\n%v", rerr, &want)
				}
				if set != nil {
					t.Errorf("set = %+v, want nil with a conflict", set)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if got := summarize(set); !reflect.DeepEqual(got, tc.wantTargets) {
				t.Errorf("targets:\n%s\nwant\n%s", dumpTargets(got), dumpTargets(tc.wantTargets))
			}
		})
	}
}

// wantTarget is what a test expects of a rules.Target: its resource, its
// rules' names and the annotations every object gets.
type wantTarget struct {
	source.Resource
	Rules       []string
	Annotations map[string]string
}

func summarize(set *rules.Set) map[schema.GroupVersionResource]*wantTarget {
	out := map[schema.GroupVersionResource]*wantTarget{}
	for gvr, t := range set.Targets {
		ev := t.Evaluate(&unstructured.Unstructured{Object: map[string]any{}}, nil)
		out[gvr] = &wantTarget{Resource: t.Resource, Rules: t.RuleNames(), Annotations: ev.Annotations}
	}
	return out
}

func dumpTargets(m map[schema.GroupVersionResource]*wantTarget) string {
	s := ""
	for _, gvr := range sortedGVRs(m) {
		t := m[gvr]
		s += fmt.Sprintf("  %s namespaced=%v rules=%v annotations=%v\n", source.GVRString(gvr), t.Namespaced, t.Rules, t.Annotations)
	}
	return s
}

func sortedGVRs(m map[schema.GroupVersionResource]*wantTarget) []schema.GroupVersionResource {
	out := make([]schema.GroupVersionResource, 0, len(m))
	for gvr := range m {
		out = append(out, gvr)
	}
	sort.Slice(out, func(i, j int) bool { return source.GVRString(out[i]) < source.GVRString(out[j]) })
	return out
}

func TestConflictErrorMessage(t *testing.T) {
	f, err := rules.Parse("rules.yaml", []byte("rules:\n"+
		"- {name: web, resources: [deploy], annotations: {team: web}}\n"+
		"- {name: db, resources: [deployments], annotations: {team: db}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = rules.Compile("rules.yaml", f, fakeResolve)
	want := `rules.yaml: rules[1].annotations.team: conflicts with rules[0] (web), which also applies to every object of deployments.v1.apps: annotation "team" is "db" here (db) and "web" there`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

func TestSortedTargets(t *testing.T) {
	gvr := func(group, resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}
	}
	tests := []struct {
		name string
		in   []schema.GroupVersionResource
		want []schema.GroupVersionResource
	}{
		{"empty", nil, []schema.GroupVersionResource{}},
		{"one", []schema.GroupVersionResource{podsGVR}, []schema.GroupVersionResource{podsGVR}},
		{"by group, then resource",
			[]schema.GroupVersionResource{gvr("ship.nwiizo.dev", "frigates"), gvr("apps", "replicasets"), gvr("", "pods"),
				gvr("batch", "jobs"), gvr("apps", "deployments"), gvr("", "namespaces"), gvr("", "configmaps")},
			[]schema.GroupVersionResource{gvr("", "configmaps"), gvr("", "namespaces"), gvr("", "pods"),
				gvr("apps", "deployments"), gvr("apps", "replicasets"), gvr("batch", "jobs"), gvr("ship.nwiizo.dev", "frigates")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := &rules.Set{Targets: map[schema.GroupVersionResource]*rules.Target{}}
			for _, g := range tc.in {
				set.Targets[g] = &rules.Target{Resource: source.Resource{GVR: g}}
			}
			// Map order varies from run to run; the result must not.
			for range 20 {
				got := []schema.GroupVersionResource{}
				for _, tg := range set.SortedTargets() {
					got = append(got, tg.GVR)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("SortedTargets = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestGVRString(t *testing.T) {
	tests := []struct {
		name string
		gvr  schema.GroupVersionResource
		want string
	}{
		{"core", podsGVR, "pods.v1"},
		{"grouped", deployGVR, "deployments.v1.apps"},
		{"custom resource", schema.GroupVersionResource{Group: "ship.nwiizo.dev", Version: "v1beta1", Resource: "frigates"}, "frigates.v1beta1.ship.nwiizo.dev"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := source.GVRString(tc.gvr); got != tc.want {
				t.Errorf("GVRString(%#v) = %q, want %q", tc.gvr, got, tc.want)
			}
		})
	}
}
