package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// admission prints a policy and binding per rule it can apply; what it
// cannot is said on stderr, and does not fail the command.
func TestAdmissionCommand(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // no kubeconfig but --server
	srv := httptest.NewServer(&fakeAPIServer{})
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	rulesYAML := "rules:\n- {name: cms, resources: [cm], annotations: {a: '1'}, removeLabels: [old]}\n" +
		"- {name: widgets, resources: [widgets.example.com], annotations: {b: '2'}}\n"
	if err := os.WriteFile(path, []byte(rulesYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := invoke("kube-annotator", "admission", "--rules", path, "--server", srv.URL, "--field-manager", "team-a")
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	docs := strings.Split(stdout, "---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want a policy and a binding:\n%s", len(docs), stdout)
	}
	var p admissionregistrationv1.MutatingAdmissionPolicy
	var b admissionregistrationv1.MutatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &p); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &b); err != nil {
		t.Fatal(err)
	}
	if p.Kind != "MutatingAdmissionPolicy" || p.Name != "team-a.cms" || b.Kind != "MutatingAdmissionPolicyBinding" || b.Spec.PolicyName != "team-a.cms" {
		t.Errorf("policy %s %s and binding %s for %s; want team-a.cms", p.Kind, p.Name, b.Kind, b.Spec.PolicyName)
	}
	if rr := p.Spec.MatchConstraints.ResourceRules; len(rr) != 1 || rr[0].Resources[0] != "configmaps" || rr[0].APIVersions[0] != "v1" {
		t.Errorf("resource rules %+v, want configmaps v1", rr)
	}
	if i := slices.IndexFunc(p.Spec.Variables, func(v admissionregistrationv1.Variable) bool { return v.Name == "marker" }); i < 0 ||
		!strings.Contains(p.Spec.Variables[i].Expression, `".admission.kube-annotator.io/team-a"`) {
		t.Errorf("the policy does not write the marker of field manager team-a: %+v", p.Spec.Variables)
	}
	for _, want := range []string{
		"warning: " + path + ": rules[1].resources[0]: resource \"widgets.example.com\" not found",
		path + ": rule cms: removeLabels: left to the controller",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	if strings.Contains(stderr, "Kubernetes 1.36") {
		t.Errorf("stderr says what the policies need of a server that serves them:\n%s", stderr)
	}
	old := httptest.NewServer(&fakeAPIServer{noAdmissionPolicies: true})
	t.Cleanup(old.Close)
	stdout, stderr, code = invoke("kube-annotator", "admission", "--rules", path, "--server", old.URL)
	if want := "Kubernetes 1.36 and later serve"; code != 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "(v1.35.4) does not serve it") || !strings.Contains(stdout, "kind: MutatingAdmissionPolicy") {
		t.Errorf("a server without the API: exit %d, stderr %q; want 0, the policies and a warning naming the versions that serve them", code, stderr)
	}

	_, stderr, code = invoke("kube-annotator", "admission", "--rules", path, "--server", srv.URL, "--field-manager", "Team:A")
	if code != 2 || !strings.HasPrefix(stderr, "error: --field-manager: \"Team:A\" would name the record ConfigMap") {
		t.Errorf("bad --field-manager: exit %d, stderr %q; want 2 and a usage error naming the flag", code, stderr)
	}
}

// rbac grants what run --admission-policies needs only when asked, and
// warns what the grant means.
func TestRBACAdmissionPolicies(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	srv := httptest.NewServer(&fakeAPIServer{})
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte("rules:\n- {name: cms, resources: [cm], annotations: {a: '1'}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, asked := range []bool{false, true} {
		args := []string{"rbac", "--rules", path, "--server", srv.URL}
		if asked {
			args = append(args, "--admission-policies")
		}
		stdout, stderr, code := invoke("kube-annotator", args...)
		if code != 0 {
			t.Fatalf("rbac %v: exit %d: %s", args, code, stderr)
		}
		granted := strings.Contains(stdout, "admissionregistration.k8s.io") &&
			strings.Contains(stdout, "- mutatingadmissionpolicies\n  - mutatingadmissionpolicybindings\n  verbs:\n  - list\n  - create\n  - patch\n  - delete\n")
		warned := strings.Contains(stderr, "warning: --admission-policies lets the ServiceAccount create MutatingAdmissionPolicies")
		if granted != asked || warned != asked {
			t.Errorf("rbac --admission-policies=%v: granted %v, warned %v\n%s%s", asked, granted, warned, stdout, stderr)
		}
	}
}
