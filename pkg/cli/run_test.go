package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run does not start when the API server cannot say which resources it
// serves: it exits 1 with an error that says so, and its Pod restarts.
func TestRunUnreachableAtStart(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // no kubeconfig but --server
	srv := httptest.NewServer(&fakeAPIServer{discoveryDown: true})
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte("rules:\n- name: cms\n  resources: [cm]\n  annotations: {a: \"1\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := invoke("kube-annotator", "run", "--rules", path, "--server", srv.URL)
	if code != 1 || !strings.Contains(stderr, `could not ask the API server to resolve the rules' resources: resolve resource "cm": `) {
		t.Errorf("exit %d, stderr %q; want 1 and could not ask the API server", code, stderr)
	}
}
