package cli

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/pkg/app"
	"github.com/kube-annotator/kube-annotator/pkg/record"
)

// A field manager or record namespace that cannot be used is a usage
// error naming the flag, before anything talks to a cluster.
func TestRecordFlagValidation(t *testing.T) {
	tests := []struct {
		commands []string
		args     []string
		want     string
	}{
		{[]string{"run", "once", "diff", "rbac"}, []string{"--field-manager", "Team_A"},
			`error: --field-manager: "Team_A" would name the record ConfigMap "Team_A-resources", which is not a valid name: `},
		{[]string{"run", "once", "diff", "rbac"}, []string{"--field-manager="}, "error: --field-manager: must not be empty"},
		{[]string{"run", "once", "diff", "rbac"}, []string{"--field-manager", strings.Repeat("m", 129)}, "error: --field-manager: "},
		{[]string{"run", "once", "diff"}, []string{"--record-namespace", "Team_A"}, `error: --record-namespace: "Team_A" is not a namespace name: `},
		{[]string{"run"}, []string{"--admission-policies", "--field-manager", "team.a"}, `error: --field-manager: field manager "team.a" cannot name admission policies: `},
	}
	for _, tc := range tests {
		for _, cmd := range tc.commands {
			t.Run(cmd+" "+strings.Join(tc.args, " "), func(t *testing.T) {
				args := append([]string{cmd, "--rules", "does-not-exist.yaml", "--kubeconfig", "does-not-exist"}, tc.args...)
				stdout, stderr, code := invoke("kube-annotator", args...)
				if code != 2 || !strings.HasPrefix(stderr, tc.want) || !strings.HasSuffix(stderr, "See 'kube-annotator "+cmd+" --help'.\n") || stdout != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and stderr starting %q", code, stdout, stderr, tc.want)
				}
			})
		}
	}
}

// The record is kept in --record-namespace; else in a Pod's namespace;
// else in -n's; else in default.
func TestRecordNamespace(t *testing.T) {
	podFile := filepath.Join(t.TempDir(), "namespace")
	if err := os.WriteFile(podFile, []byte("sys\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, saFile, flag, scope, want string
	}{
		{"flag", podFile, "rec", "team-a", "rec"},
		{"in a Pod", podFile, "", "team-a", "sys"},
		{"outside, -n", "/nonexistent", "", "team-a", "team-a"},
		{"outside, every namespace", "/nonexistent", "", "", "default"},
	}
	old := serviceAccountNamespace
	t.Cleanup(func() { serviceAccountNamespace = old })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			serviceAccountNamespace = tc.saFile
			if got := recordNamespace(tc.flag, tc.scope); got != tc.want {
				t.Errorf("recordNamespace(%q, %q) = %q, want %q", tc.flag, tc.scope, got, tc.want)
			}
		})
	}
}

// A ConfigMap of the record's name that is not a record is an error that
// names --field-manager, with which the user chooses another record.
func TestLoadRecordNotARecord(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/ns/configmaps/m-resources" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m-resources", "namespace": "ns"}}`)
	}))
	t.Cleanup(srv.Close)
	_, err := loadRecord(t.Context(), &rest.Config{Host: srv.URL}, &app.RecordConfig{FieldManager: "m", Namespace: "ns"}, "")
	want := `--field-manager "m": record ns/m-resources: the ConfigMap exists but is not a record (it lacks the label ` +
		record.ManagedByLabel + "=" + record.ManagedBy + "); delete it, or choose another field manager"
	if err == nil || err.Error() != want || !errors.Is(err, record.ErrNotRecord) {
		t.Errorf("loadRecord() = %v, want %q", err, want)
	}
}
