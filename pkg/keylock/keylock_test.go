package keylock

import (
	"slices"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

func TestPolicies(t *testing.T) {
	set := rulestest.Compile(t, `rules:
- name: free
  resources: [namespaces]
  labels: {team: a}
- name: psa
  resources: [namespaces]
  namespaces: [oil-dev]
  locked: {groups: [platform-admins]}
  labels: {pod-security.kubernetes.io/enforce: baseline}
  removeLabels: [evil.example/bypass]
- name: cost
  resources: [configmaps, deployments]
  locked: true
  annotations: {cost: {jsonPath: '{.metadata.name}'}}
`, rulestest.Namespaces, rulestest.ConfigMaps, rulestest.Deployments)
	got := Policies(set, "kube-annotator")
	if names := []string{got[0].Policy.Name, got[1].Policy.Name}; len(got) != 2 || !slices.Equal(names, []string{"kube-annotator.lock.psa", "kube-annotator.lock.cost"}) {
		t.Fatalf("policies %v, want the locked rules' alone, in file order", got)
	}
	psa, cost := got[0].Policy.Spec, got[1].Policy.Spec
	for _, tc := range []struct{ what, got, want string }{
		{"literal key at CREATE", psa.MatchConditions[0].Expression,
			`(oldObject == null ? (object.metadata.?labels[?"pod-security.kubernetes.io/enforce"].orValue("\u0000") != "\u0000" && object.metadata.?labels[?"pod-security.kubernetes.io/enforce"].orValue("\u0000") != "baseline")`},
		{"removed key", psa.MatchConditions[0].Expression, `oldObject.metadata.?labels[?"evil.example/bypass"].orValue("\u0000") != object.metadata.?labels[?"evil.example/bypass"]`},
		{"groups named", psa.Validations[0].Expression, `request.userInfo.groups.exists(g, g in ["platform-admins"])`},
		{"no user but those named", psa.Validations[0].Expression, `request.userInfo.username in []`},
		{"message names the rule and keys", psa.Validations[0].MessageExpression, `rule psa locks label evil.example/bypass, label pod-security.kubernetes.io/enforce: only platform-admins may`},
		{"computed key at CREATE", cost.MatchConditions[0].Expression, `(oldObject == null ? (object.metadata.?annotations[?"cost"].orValue("\u0000") != "\u0000") :`},
		{"default users", cost.Validations[0].Expression, `["system:serviceaccount:kube-annotator:kube-annotator"]`},
		{"default groups", cost.Validations[0].Expression, `["system:masters", "kubeadm:cluster-admins"]`},
	} {
		if !strings.Contains(tc.got, tc.want) {
			t.Errorf("%s: %s\nwant it to hold %s", tc.what, tc.got, tc.want)
		}
	}
	if sel := psa.MatchConstraints.NamespaceSelector; sel == nil || !slices.Equal(sel.MatchExpressions[0].Values, []string{"oil-dev"}) {
		t.Errorf("psa's namespace selector %v, want oil-dev's name", sel)
	}
	if cost.MatchConstraints.NamespaceSelector != nil {
		t.Errorf("cost names no namespace, yet its policy selects %v", cost.MatchConstraints.NamespaceSelector)
	}
	var resources []string
	for _, r := range cost.MatchConstraints.ResourceRules {
		resources = append(resources, r.APIGroups[0]+"/"+strings.Join(r.Resources, ","))
	}
	if want := []string{"/configmaps,configmaps/*", "apps/deployments,deployments/*"}; !slices.Equal(resources, want) {
		t.Errorf("cost's resources %v, want %v: each with its subresources", resources, want)
	}
	out, err := Manifests(got)
	if err != nil || strings.Count(string(out), "kind: ValidatingAdmissionPolicy\n") != 2 || strings.Count(string(out), "kind: ValidatingAdmissionPolicyBinding\n") != 2 {
		t.Errorf("manifests (%v):\n%s", err, out)
	}
}
