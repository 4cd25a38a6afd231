package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// check and rbac warn on stderr about sensitive resources; the exit code
// and stdout (the table, the YAML) are what they would be without.
func TestSensitiveWarningsInCommands(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // no kubeconfig but --server
	srv := httptest.NewServer(&fakeAPIServer{})
	t.Cleanup(srv.Close)
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(`rules:
- name: cms
  resources: [cm]
  annotations: {a: "1"}
- name: identities
  resources: [sa, clusterroles.rbac.authorization.k8s.io]
  annotations: {a: "1"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	saWarning := rulesFile + `: rules[1].resources[0]: rule "identities" targets sa (serviceaccounts): the ClusterRole that the rbac command generates`
	roleWarning := rulesFile + `: rules[1].resources[1]: rule "identities" targets clusterroles.rbac.authorization.k8s.io: the ClusterRole that the rbac command generates`
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{name: "check --offline", args: []string{"check", "--offline"}, wantCode: 0,
			wantStdout: []string{rulesFile + ": valid (2 rules)\n"}, wantStderr: []string{saWarning, roleWarning}},
		// clusterroles are not served by the fake API server: a verdict
		// of 1, and the warning still, from the name as written.
		{name: "check", args: []string{"check", "--server", srv.URL}, wantCode: 1,
			wantStdout: []string{"serviceaccounts.v1", "not found"}, wantStderr: []string{saWarning, roleWarning}},
		{name: "rbac", args: []string{"rbac", "--server", srv.URL}, wantCode: 0,
			wantStdout: []string{"- serviceaccounts\n", "- clusterroles\n"},
			wantStderr: []string{saWarning, roleWarning, "clusterroles.rbac.authorization.k8s.io is not served by the cluster"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := invoke("kube-annotator", append(tc.args, "--rules", rulesFile)...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d", code, tc.wantCode)
			}
			for _, want := range tc.wantStdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q", want)
				}
			}
			for _, want := range tc.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q", want)
				}
			}
			if n := strings.Count(stderr, "the ClusterRole that the rbac command generates"); n != 2 {
				t.Errorf("%d warnings about sensitive resources, want 2", n)
			}
			if strings.Contains(stdout, "warning") {
				t.Errorf("a warning is on stdout")
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
}

// rbac's stdout is a YAML stream and nothing else, warnings or not.
func TestRBACStdoutIsYAML(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	srv := httptest.NewServer(&fakeAPIServer{})
	t.Cleanup(srv.Close)
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte("rules:\n- name: sas\n  resources: [sa]\n  annotations: {a: \"1\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := invoke("kube-annotator", "rbac", "--rules", rulesFile, "--server", srv.URL)
	if code != 0 || !strings.Contains(stderr, "warning: ") {
		t.Fatalf("rbac: exit %d, want 0 with a warning on stderr:\n%s", code, stderr)
	}
	var kinds []string
	for _, doc := range strings.Split(stdout, "---\n") {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string            `json:"name"`
				Namespace string            `json:"namespace,omitempty"`
				Labels    map[string]string `json:"labels"`
			} `json:"metadata"`
			Rules    []map[string]any `json:"rules,omitempty"`
			Subjects []map[string]any `json:"subjects,omitempty"`
			RoleRef  map[string]any   `json:"roleRef,omitempty"`
		}
		if err := yaml.UnmarshalStrict([]byte(doc), &obj); err != nil {
			t.Fatalf("stdout is not a stream of RBAC objects: %v\n%s", err, stdout)
		}
		kinds = append(kinds, obj.Kind)
	}
	if got := strings.Join(kinds, ","); got != "ServiceAccount,ClusterRole,ClusterRoleBinding,Role,RoleBinding" {
		t.Errorf("kinds %s", got)
	}
}
