package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/version"
)

// version prints the version, commit, build date, Go version and platform,
// as one line of text or as JSON or YAML.
func TestVersion(t *testing.T) {
	old := [3]string{version.Version, version.Commit, version.Date}
	version.Version, version.Commit, version.Date = "v1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-12-01T10:00:00Z"
	t.Cleanup(func() { version.Version, version.Commit, version.Date = old[0], old[1], old[2] })

	text, stderr, code := invoke("kube-annotator", "version")
	if code != 0 || stderr != "" || !strings.HasPrefix(text, "kube-annotator v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567, built 2026-12-01T10:00:00Z, go1.") {
		t.Errorf("version: exit %d, stdout %q, stderr %q", code, text, stderr)
	}
	for _, output := range []string{"json", "yaml"} {
		out, stderr, code := invoke("kube-annotator", "version", "-o", output)
		if code != 0 || stderr != "" {
			t.Fatalf("version -o %s: exit %d, stderr %q", output, code, stderr)
		}
		want := version.Get()
		for _, field := range []string{want.Version, want.GitCommit, want.BuildDate, want.GoVersion, want.Platform} {
			if !strings.Contains(out, field) {
				t.Errorf("version -o %s lacks %q:\n%s", output, field, out)
			}
		}
		if output == "json" {
			var got version.Info
			if err := json.Unmarshal([]byte(out), &got); err != nil || got != want {
				t.Errorf("version -o json = %+v (%v), want %+v", got, err, want)
			}
		}
	}
}
