package e2e

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// admissionRules are the rules of TestAdmissionPoliciesFollowRules, in ns:
// team's value, and whether the rule "web" is there.
func admissionRules(ns, team string, web bool) string {
	s := fmt.Sprintf(`rules:
- name: team
  resources: [configmaps]
  namespaces: [%[1]s]
  annotations: {team: %[2]s}
- name: wild
  resources: [configmaps]
  namespaces: [%[1]s]
  annotations: {first: {jsonPath: '{.data.*}'}}
`, ns, team)
	if web {
		s += fmt.Sprintf(`- name: web
  resources: [configmaps]
  namespaces: [%s]
  selector: app=web
  labels: {tier: web}
`, ns)
	}
	return s + probeRule(ns)
}

// run --admission-policies keeps the policies equal to the rules: a rule
// edited is followed within 5s, a rule removed takes its policy with it,
// and the controller then removes from objects annotated at admission the
// keys no rule wants, leaving everyone else's byte for byte. A rule that
// cannot be applied at admission is reported and still enforced.
func TestAdmissionPoliciesFollowRules(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", admissionRules(ns, "a", true))
	if !env.Features.MutatingAdmissionPolicyV1 {
		admissionRunDegraded(t, env, ns, rulesFile)
		return
	}
	deletePoliciesAtEnd(t)
	p := startRun(t, "--rules", rulesFile, "--admission-policies")
	waitPolicies(t, ns, 15*time.Second)
	waitLog(t, p, 5*time.Second, "Not applied at admission", "rule wild: annotations.first: a wildcard cannot be read at admission", 1)

	theirs := map[string]string{"note": " keep\tme \n", "team-lead": "x"}
	x := h.Object("v1", "ConfigMap", ns, "x")
	x.SetAnnotations(theirs)
	x.SetLabels(map[string]string{"app": "web"})
	x.Object["data"] = map[string]any{"k": "v"}
	mine := h.Object("v1", "ConfigMap", ns, "mine")
	mine.SetLabels(map[string]string{"tier": "mine"}) // not app=web: someone else's tier
	same := h.Object("v1", "ConfigMap", ns, "same")
	same.SetLabels(map[string]string{"app": "web", "tier": "web"}) // the rule's value, set by the creator
	created := env.Create(t, h.ConfigMaps, ns, x)
	env.Create(t, h.ConfigMaps, ns, mine)
	if got := env.Create(t, h.ConfigMaps, ns, same).GetAnnotations()[marker("configmaps")]; got != "team" {
		t.Errorf("same: marker %q, want only team listed: the creator set tier", got)
	}
	cmMarker := marker("configmaps")
	checkAnnotations(t, "created", created, map[string]string{"team": "a", "note": theirs["note"], "first": "", cmMarker: "label:tier,team"})
	if created.GetLabels()["tier"] != "web" {
		t.Errorf("created: labels %v, want tier=web", created.GetLabels())
	}
	// The rule admission cannot apply, the controller enforces.
	env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, ns, "x", "first", "v")

	t.Run("a rule edited: its policy follows within 5s", func(t *testing.T) {
		replaceFile(t, rulesFile, admissionRules(ns, "b", true))
		took := waitFor(t, 5*time.Second, "policy kube-annotator.team sets team=b", func() bool {
			return strings.Contains(policyExpression(t, "kube-annotator.team"), `optional.of("b")`)
		})
		t.Logf("policy updated %v after the rules file", took.Round(time.Millisecond))
		env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, ns, "x", "team", "b")
		waitFor(t, 5*time.Second, "a new ConfigMap is created with team=b", func() bool {
			y := env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, fmt.Sprintf("y-%d", time.Now().UnixNano())))
			return y.GetAnnotations()["team"] == "b"
		})
	})

	t.Run("a rule removed: its policy goes, and so do the keys it set", func(t *testing.T) {
		replaceFile(t, rulesFile, admissionRules(ns, "b", false))
		took := waitFor(t, 5*time.Second, "policy kube-annotator.web deleted", func() bool {
			return policyExpression(t, "kube-annotator.web") == ""
		})
		t.Logf("policy deleted %v after the rules file", took.Round(time.Millisecond))
		waitFor(t, 10*time.Second, "the controller removes the label set at admission", func() bool {
			_, ok := env.Get(t, h.ConfigMaps, ns, "x").GetLabels()["tier"]
			return !ok
		})
		got := env.Get(t, h.ConfigMaps, ns, "x")
		want := maps.Clone(theirs)
		maps.Copy(want, map[string]string{"team": "b", "first": "v", cmMarker: "team"})
		if !maps.Equal(got.GetAnnotations(), want) {
			t.Errorf("x: annotations %q, want %q", got.GetAnnotations(), want)
		}
		if l := got.GetLabels(); !maps.Equal(l, map[string]string{"app": "web"}) {
			t.Errorf("x: labels %v, want only app=web, as its creator set it", l)
		}
		if l := env.Get(t, h.ConfigMaps, ns, "mine").GetLabels(); l["tier"] != "mine" {
			t.Errorf("mine: labels %v, want tier=mine, as its creator set it", l)
		}
		if l := env.Get(t, h.ConfigMaps, ns, "same").GetLabels(); l["tier"] != "web" {
			t.Errorf("same: labels %v, want tier=web, as its creator set it", l)
		}
	})
}

// A policy whose CEL fails at admission (a JSONPath that reads a map, which
// CEL cannot print as kubectl does) is ignored: creates succeed, and the
// controller converges the object.
func TestAdmissionPolicyFailureIgnored(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: bad
  resources: [deployments]
  namespaces: [%[1]s]
  annotations: {sample-controller: "True", selector: {jsonPath: '{.spec.selector.matchLabels}'}}
`, ns)+probeRule(ns))
	if !env.Features.MutatingAdmissionPolicyV1 {
		admissionRunDegraded(t, env, ns, rulesFile)
		return
	}
	deletePoliciesAtEnd(t)
	startRun(t, "--rules", rulesFile, "--admission-policies")
	waitPolicies(t, ns, 15*time.Second)

	created := env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "web", 0))
	checkAnnotations(t, "created", created, map[string]string{"sample-controller": "", "selector": ""})
	env.WaitForAnnotation(t, 10*time.Second, h.Deployments, ns, "web", "sample-controller", "True")
	env.WaitForAnnotation(t, 10*time.Second, h.Deployments, ns, "web", "selector", `{"app":"web"}`)
}
