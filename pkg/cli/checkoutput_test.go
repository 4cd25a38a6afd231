package cli

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/check"
	"sigs.k8s.io/yaml"
)

// check -o json and -o yaml print the file, its rules count, every problem
// with its path, line and message, and the verdicts on the cluster; the
// exit status is the report's ok.
func TestCheckOutput(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	srv := httptest.NewServer(&fakeAPIServer{denied: []string{"patch"}})
	t.Cleanup(srv.Close)
	write := func(content string) string {
		path := filepath.Join(t.TempDir(), "rules.yaml")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	valid := write("rules:\n- name: cms\n  resources: [cm, widgets.example.com]\n  annotations: {a: \"1\"}\n")
	invalid := write("rules:\n- name: cms\n  resources: [cm]\n  annotations: {\"bad key!\": \"1\"}\n")
	conflict := write("rules:\n- {name: a, resources: [cm], annotations: {a: \"1\"}}\n- {name: b, resources: [configmaps], annotations: {a: \"2\"}}\n")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     check.Report
	}{
		{"offline", []string{"--rules", valid, "--offline"}, 0, // widgets.example.com is not known offline
			check.Report{File: valid, Valid: true, Rules: 1, Problems: []check.Problem{{Severity: "warning", Path: "rules[0].resources[1]"}}, OK: true}},
		{"offline conflict", []string{"--rules", conflict, "--offline"}, 1,
			check.Report{File: conflict, Problems: []check.Problem{{Severity: "error", Path: "rules[1].annotations.a"}}}},
		{"conflict on a cluster", []string{"--rules", conflict, "--server", srv.URL}, 1,
			check.Report{File: conflict, Problems: []check.Problem{{Severity: "error", Path: "rules[1].annotations.a"}}}},
		{"invalid", []string{"--rules", invalid, "--offline"}, 1,
			check.Report{File: invalid, Problems: []check.Problem{{Severity: "error", Path: "rules[0].annotations.bad key!", Line: 4}}}},
		{"on a cluster", []string{"--rules", valid, "--server", srv.URL}, 1,
			check.Report{File: valid, Valid: true, Rules: 1, Problems: []check.Problem{}, Resources: []check.Verdict{
				{Rule: "cms", Resource: "cm", ServedAs: "configmaps.v1", Status: "forbidden", Denied: []string{"patch"}},
				{Rule: "cms", Resource: "widgets.example.com", Status: "not found"},
			}}},
	}
	for _, tc := range tests {
		for _, output := range []string{"json", "yaml"} {
			t.Run(tc.name+"/"+output, func(t *testing.T) {
				stdout, stderr, code := invoke("kube-annotator", append([]string{"check", "-o", output}, tc.args...)...)
				var got check.Report
				data := []byte(stdout)
				if output == "yaml" {
					var err error
					if data, err = yaml.YAMLToJSON(data); err != nil {
						t.Fatalf("stdout is not YAML: %v\n%s", err, stdout)
					}
				}
				if err := json.Unmarshal(data, &got); err != nil {
					t.Fatalf("stdout is not a report: %v\n%s", err, stdout)
				}
				for i := range got.Problems { // the messages are the rules package's
					if got.Problems[i].Message == "" {
						t.Errorf("problem %d has no message", i)
					}
					got.Problems[i].Message = ""
				}
				if code != tc.wantCode || !reflect.DeepEqual(got, tc.want) || strings.Contains(stderr, "warning:") {
					t.Errorf("exit %d, report %+v, stderr %q; want exit %d, %+v and no warnings on stderr", code, got, stderr, tc.wantCode, tc.want)
				}
			})
		}
	}
}
