package cli

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// explain reports what run --field-manager would do: a key that no rule
// wants any more is deleted only by the manager that owns it.
func TestExplainFieldManager(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // no kubeconfig but --server
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{"team": "a", "old": "x"},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "custom", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{"f:old":{},"f:team":{}}}}`)},
			}}},
	}
	srv := httptest.NewServer(&fakeAPIServer{objects: map[string]any{"/api/v1/namespaces/default/configmaps/web": cm}})
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte("rules:\n- name: team\n  resources: [cm]\n  annotations: {team: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		args        []string
		wantChanges int
	}{
		{"the default manager owns nothing here", nil, 0},
		{"the manager that owns old deletes it", []string{"--field-manager", "custom"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"explain", "cm/web", "--rules", path, "--server", srv.URL, "-o", "json"}, tc.args...)
			stdout, stderr, code := invoke("kube-annotator", args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			var x explained
			if err := json.Unmarshal([]byte(stdout), &x); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if len(x.Changes) != tc.wantChanges {
				t.Fatalf("changes %+v, want %d", x.Changes, tc.wantChanges)
			}
			if tc.wantChanges > 0 {
				c := x.Changes[0]
				if c.Key != "old" || c.New != nil || c.Rule != "" {
					t.Errorf("change %+v, want old deleted for no rule", c)
				}
			}
			if len(x.Keys) != 2 || x.Keys[0].Key != "old" || len(x.Keys[0].Owners) != 1 || x.Keys[0].Owners[0] != "custom" {
				t.Errorf("keys %+v, want old owned by custom", x.Keys)
			}
		})
	}
}
