package tenants

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// limits are those of the research case: tenants may set myorg.net/* and
// team labels on their Pods and Namespace, nothing else.
func limits() *spec.Tenants {
	return &spec.Tenants{ConfigMap: spec.DefaultTenantConfigMap, Key: spec.DefaultTenantKey, Resources: []string{"pods", "namespaces", "deployments.apps"},
		Labels: []string{"myorg.net/*", "team"}, Annotations: []string{"myorg.net/*"}, MaxRules: 3, MaxKeys: 4, MaxValueBytes: 16,
		ValueForms: spec.DefaultTenantValueForms}
}

func file(src string) File {
	return File{Namespace: "oil-dev", ConfigMap: spec.DefaultTenantConfigMap, Data: []byte(src)}
}

func TestCheckKeepsWhatLimitsAllow(t *testing.T) {
	res := Check(limits(), file(`rules:
- name: foo
  resources: [namespaces]
  labels: {myorg.net/foo: "1"}
- name: evil
  resources: [namespaces]
  labels: {evil.example/bypass: "1"}
- name: team
  resources: [pods]
  labels: {team: {fromNamespace: {label: team}}}
`))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := ruleNames(res.Rules); !slices.Equal(got, []string{"oil-dev/foo", "oil-dev/team"}) {
		t.Errorf("rules in force %v", got)
	}
	for _, r := range res.Rules {
		if r.Tenant != "oil-dev" || !slices.Equal(r.Namespaces, []string{"oil-dev"}) {
			t.Errorf("rule %s: tenant %q, namespaces %v: want the tenant's namespace alone", r.Name, r.Tenant, r.Namespaces)
		}
	}
	want := `line 7: rules[1].labels.evil.example/bypass: label key "evil.example/bypass" matches none of tenants.keys.labels (myorg.net/*, team)`
	if len(res.Refused) != 1 || res.Refused[0].String() != want {
		t.Errorf("refused %v, want [%s]", res.Refused, want)
	}
	if got := res.Status(); !strings.HasPrefix(got, "2 of 3 rules in force; refused:\n"+want) {
		t.Errorf("status %q", got)
	}
}

// Each limit refuses the rule that breaks it, naming the field and the
// limit, and only that rule.
func TestCheckRefusals(t *testing.T) {
	for _, tc := range []struct{ name, rule, want string }{
		{"resource not allowed", "resources: [configmaps]\n  labels: {team: a}", `rules[1].resources[0]: "configmaps" is not one of the resources tenants.resources allows`},
		{"secrets", "resources: [secrets]\n  labels: {team: a}", "rules[1].resources[0]: tenant rules may never write Secrets"},
		{"namespaces field", "resources: [pods]\n  namespaces: [other]\n  labels: {team: a}", "rules[1].namespaces: only the main rules file may give it"},
		{"selector of namespaces", "resources: [pods]\n  namespaceSelector: a=b\n  labels: {team: a}", "rules[1].namespaceSelector: only the main rules file may give it"},
		{"opt-out refused", "resources: [pods]\n  allowOptOut: false\n  labels: {team: a}", "rules[1].allowOptOut: only the main rules file may give it"},
		{"annotation key", "resources: [pods]\n  annotations: {team: a}", `rules[1].annotations.team: annotation key "team" matches none of tenants.keys.annotations`},
		{"removed key", "resources: [pods]\n  removeLabels: [app]", `rules[1].removeLabels: label key "app" matches none of tenants.keys.labels`},
		{"cel value", "resources: [pods]\n  labels: {team: {cel: object.metadata.name}}", "rules[1].labels.team: the value form cel is not one tenants.valueForms allows"},
		{"when", "resources: [pods]\n  when: object.metadata.name == 'a'\n  labels: {team: a}", "rules[1].when: the value form cel is not one tenants.valueForms allows"},
		{"fromNode", "resources: [pods]\n  labels: {team: {fromNode: {label: team}}}", "rules[1].labels.team: the value form fromNode is not one"},
		{"copy", "resources: [pods]\n  copy: [{fromNamespace: {labels: [\"myorg.net/*\"]}}]", "rules[1].copy[0]: the value form copy is not one"},
		{"long value", "resources: [pods]\n  labels: {team: {value: a, ifAbsent: true}}\n  annotations: {myorg.net/x: \"0123456789abcdefg\"}", "rules[1].annotations.myorg.net/x: its value is 17 bytes, more than the 16 tenants.maxValueBytes allows"},
		{"too many keys", "resources: [pods]\n  labels: {myorg.net/a: a, myorg.net/b: b, myorg.net/c: c, myorg.net/d: d}", "rules[1]: its keys would make 5 in the file, more than the 4 tenants.maxKeys allows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Check(limits(), file("rules:\n- name: ok\n  resources: [pods]\n  labels: {team: a}\n- name: bad\n  "+tc.rule+"\n"))
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if got := ruleNames(res.Rules); !slices.Equal(got, []string{"oil-dev/ok"}) {
				t.Errorf("rules in force %v, want the first alone", got)
			}
			if !slices.ContainsFunc(res.Refused, func(r Refusal) bool { return strings.Contains(r.String(), tc.want) }) {
				t.Errorf("refused %v, want one with %q", res.Refused, tc.want)
			}
		})
	}
}

func TestCheckMaxRules(t *testing.T) {
	var b strings.Builder
	b.WriteString("rules:\n")
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		b.WriteString("- name: " + n + "\n  resources: [pods]\n  labels: {team: " + n + "}\n  names: [" + n + "]\n")
	}
	res := Check(limits(), file(b.String()))
	if got := ruleNames(res.Rules); !slices.Equal(got, []string{"oil-dev/a", "oil-dev/b", "oil-dev/c"}) {
		t.Errorf("rules in force %v", got)
	}
	if len(res.Refused) != 2 || !strings.Contains(res.Refused[0].String(), "more than the 3 rules tenants.maxRules allows") {
		t.Errorf("refused %v", res.Refused)
	}
}

// A file that cannot be read keeps none of its rules, and says why.
func TestCheckFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    File
		want string
	}{
		{"missing key", File{Namespace: "a", ConfigMap: "c", Missing: true}, `configmap a/c has no key "rules.yaml" in its data`},
		{"malformed", file("rules: [{name: x}"), "configmap oil-dev/kube-annotator-rules:"},
		{"tenants section", file("tenants: {resources: [pods], keys: {labels: [a]}}\nrules: []\n"), "line 1: tenants: only the main rules file may let tenants write rules"},
		{"too big", file("rules: []\n#" + strings.Repeat("x", spec.MaxFileSize)), "configmap oil-dev/kube-annotator-rules"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Check(limits(), tc.f)
			if res.Err == nil || !strings.Contains(res.Err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", res.Err, tc.want)
			}
			if res.InForce() != 0 || !strings.HasPrefix(res.Status(), "no rule in force: ") {
				t.Errorf("in force %d, status %q", res.InForce(), res.Status())
			}
		})
	}
}

func TestComposeBlamesTheTenantAlone(t *testing.T) {
	admin := &spec.File{Rules: []spec.Rule{{Name: "admin"}}}
	a := Result{File: File{Namespace: "a", ConfigMap: "c"}, Rules: []spec.Rule{{Name: "a/x"}}, Indexes: []int{0}, Total: 1, file: &spec.File{}}
	b := Result{File: File{Namespace: "b", ConfigMap: "c"}, Rules: []spec.Rule{{Name: "b/keep"}, {Name: "b/bad"}}, Indexes: []int{0, 2}, Total: 3, file: &spec.File{}}
	compile := func(f *spec.File) error {
		for i, r := range f.Rules {
			if r.Name == "b/bad" {
				return &spec.Error{File: "merged", Fields: []spec.FieldError{{Field: "rules[" + string(rune('0'+i)) + "].labels.x",
					Message: "set by rules[" + string(rune('0'+i)) + "] (b/bad), read by rules[0] (admin)"}}}
			}
		}
		return nil
	}
	results := []Result{a, b}
	got := Compose(admin, results, compile)
	if names := ruleNames(got.Rules); !slices.Equal(names, []string{"admin", "a/x"}) {
		t.Errorf("merged %v, want the admin's and a's", names)
	}
	var fe *spec.Error
	if results[0].Err != nil || !errors.As(results[1].Err, &fe) || fe.Fields[0].Field != "rules[2].labels.x" ||
		fe.Fields[0].Message != "set by rules[2] (b/bad), read by the main file's rules[0] (admin)" {
		t.Errorf("errors %v, %v: want b's, naming its own rules[2]", results[0].Err, results[1].Err)
	}
}

func ruleNames(rules []spec.Rule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.Name)
	}
	return out
}
