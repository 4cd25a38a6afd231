package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run does not start when the API server does not answer its first
// request: it exits 1 with an error that says so in one line, and its Pod
// restarts.
func TestRunUnreachableAtStart(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // no kubeconfig but --server
	srv := httptest.NewServer(&fakeAPIServer{discoveryDown: true})
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte("rules:\n- name: cms\n  resources: [cm]\n  annotations: {a: \"1\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := invoke("kube-annotator", "run", "--rules", path, "--server", srv.URL)
	if want := "error: API server " + srv.URL + ": etcd is down\n"; code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}

// The names by which the process's errors point to its settings are run's
// own flags.
func TestRunSettingNamesAreFlags(t *testing.T) {
	c := (&env{}).newRunCommand()
	for _, name := range []string{runSettingNames.MaxChanges, runSettingNames.FieldManager, runSettingNames.RecordNamespace} {
		if !strings.HasPrefix(name, "--") || c.Flags().Lookup(strings.TrimPrefix(name, "--")) == nil {
			t.Errorf("%q is no flag of run", name)
		}
	}
}
