package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	tests := []struct {
		name string
		env  map[string]string
		want int
	}{
		{"GOGC unset: the controller's default", nil, defaultGCPercent},
		{"GOGC set: the runtime's, untouched", map[string]string{"GOGC": "200"}, 100},
		{"GOGC set empty: untouched too", map[string]string{"GOGC": ""}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			tuneGC(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if got := debug.SetGCPercent(100); got != tc.want {
				t.Errorf("GC percent %d, want %d", got, tc.want)
			}
		})
	}
}

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
