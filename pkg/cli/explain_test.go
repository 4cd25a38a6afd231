package cli

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/explain"
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
			var x explain.Object
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

// explain -A explains each object of that name in every namespace, one
// after another, and -o prints them as a list; none is an error.
func TestExplainAllNamespaces(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cm := func(ns string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	}
	list := func(items ...corev1.ConfigMap) *corev1.ConfigMapList {
		return &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}, Items: items}
	}
	srv := httptest.NewServer(&fakeAPIServer{objects: map[string]any{
		"/api/v1/configmaps":                  list(*cm("a"), *cm("b")),
		"/api/v1/namespaces/a/configmaps/web": cm("a"),
		"/api/v1/namespaces/b/configmaps/web": cm("b"),
	}})
	t.Cleanup(srv.Close)
	empty := httptest.NewServer(&fakeAPIServer{objects: map[string]any{"/api/v1/configmaps": list()}})
	t.Cleanup(empty.Close)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte("rules:\n- name: team\n  resources: [cm]\n  annotations: {team: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := invoke("kube-annotator", "explain", "-A", "cm", "web", "--rules", path, "--server", srv.URL, "-o", "json")
	var xs []explain.Object
	if err := json.Unmarshal([]byte(stdout), &xs); code != 0 || err != nil || len(xs) != 2 || xs[0].Namespace != "a" || xs[1].Namespace != "b" {
		t.Errorf("explain -A -o json: exit %d, %v, stdout %s, stderr %q; want a list of a/web and b/web", code, err, stdout, stderr)
	}
	stdout, _, code = invoke("kube-annotator", "explain", "-A", "cm/web", "--rules", path, "--server", srv.URL)
	if code != 0 || !strings.HasPrefix(stdout, "configmaps.v1 a/web\n") || !strings.Contains(stdout, "\n\nconfigmaps.v1 b/web\n") {
		t.Errorf("explain -A: exit %d, stdout:\n%s\nwant a/web, then b/web", code, stdout)
	}
	_, stderr, code = invoke("kube-annotator", "explain", "-A", "cm/web", "--rules", path, "--server", empty.URL)
	if want := "error: configmaps.v1 \"web\" not found in any namespace\n"; code != 1 || stderr != want {
		t.Errorf("explain -A, none: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}

// A rule that --exclude-namespaces leaves out says so, naming the flag,
// as text and in -o json.
func TestExplainExcludedNamespace(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "kube-system"}}
	srv := httptest.NewServer(&fakeAPIServer{objects: map[string]any{"/api/v1/namespaces/kube-system/configmaps/web": cm}})
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte("rules:\n- name: team\n  resources: [cm]\n  annotations: {team: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const want = `--exclude-namespaces "kube-system" leaves out namespace "kube-system"`
	stdout, stderr, code := invoke("kube-annotator", "explain", "cm/web", "-n", "kube-system", "--rules", path, "--server", srv.URL)
	if code != 0 || !strings.Contains(stdout, "does not select: "+want) {
		t.Errorf("explain: exit %d, stderr %q, stdout:\n%s\nwant %q", code, stderr, stdout, want)
	}
	stdout, stderr, code = invoke("kube-annotator", "explain", "cm/web", "-n", "kube-system", "--rules", path, "--server", srv.URL, "-o", "json")
	var x explain.Object
	if err := json.Unmarshal([]byte(stdout), &x); code != 0 || err != nil || len(x.Rules) != 1 || x.Rules[0].Reason != want {
		t.Errorf("explain -o json: exit %d, %v, stderr %q, stdout %s; want the reason %q", code, err, stderr, stdout, want)
	}
}
