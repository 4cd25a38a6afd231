package cli

import (
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kube-annotator/kube-annotator/pkg/completion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// complete asks __complete for the completions of args, the last one being
// the word under the cursor, and returns them, cobra's directive, and what
// it printed on stderr besides the line cobra always prints there.
func complete(t *testing.T, args ...string) (completions []string, directive, stderr string) {
	t.Helper()
	stdout, errOut, code := invoke("kubectl-annotator", append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d, stderr %q", args, code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	directive = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		completions = append(completions, strings.SplitN(l, "\t", 2)[0])
	}
	var rest []string
	for _, l := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, "Completion ended with directive: ") {
			rest = append(rest, l)
		}
	}
	return completions, directive, strings.Join(rest, "\n")
}

// metadataList is a list of objects named names, as the API server answers
// a list request for metadata only.
func metadataList(names ...string) metav1.PartialObjectMetadataList {
	l := metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: "meta.k8s.io/v1"}}
	for _, n := range names {
		l.Items = append(l.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return l
}

// Completion answers from the command tree, the flags, the kubeconfig and
// the cluster, as kubectl's does; a cluster it cannot ask completes
// nothing, quickly and silently.
func TestCompletion(t *testing.T) {
	srv := httptest.NewServer(&fakeAPIServer{objects: map[string]any{
		"/api/v1/namespaces":                   metadataList("team-a", "team-b", "kube-system"),
		"/api/v1/namespaces/a/configmaps":      metadataList("web", "settings"),
		"/api/v1/namespaces/team-b/configmaps": metadataList("db"),
	}})
	t.Cleanup(srv.Close)
	testKubeconfig(t, srv.URL)
	// The kubeconfig has one context, a, in namespace "" (default); name
	// another for the context's namespace.
	kc := os.Getenv("KUBECONFIG")
	data, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "context: {cluster: a, user: a}", "context: {cluster: a, user: a, namespace: a}", 1))
	if err := os.WriteFile(kc, data, 0o600); err != nil {
		t.Fatal(err)
	}
	const noFiles, filterExt = ":4", ":8"
	tests := []struct {
		name          string
		args          []string
		want          []string
		wantDirective string
	}{
		{"commands", []string{"o"}, []string{"once"}, noFiles},
		{"shells", []string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}, noFiles},
		{"flags", []string{"check", "--off"}, []string{"--offline"}, noFiles},
		{"output formats", []string{"diff", "-o", ""}, []string{"json", "yaml"}, noFiles},
		{"rules files", []string{"check", "--rules", ""}, []string{"yaml", "yml"}, filterExt},
		{"contexts", []string{"once", "--context", ""}, []string{"a"}, noFiles},
		{"namespaces", []string{"diff", "-n", "team"}, []string{"team-a", "team-b"}, noFiles},
		{"resources", []string{"explain", "config"}, []string{"configmaps"}, noFiles},
		{"names in the context's namespace", []string{"explain", "configmaps", ""}, []string{"settings", "web"}, noFiles},
		{"names after RESOURCE/", []string{"explain", "cm/w"}, []string{"cm/web"}, noFiles},
		{"names in -n", []string{"explain", "-n", "team-b", "configmaps", ""}, []string{"db"}, noFiles},
		{"nothing after the object", []string{"explain", "configmaps", "web", ""}, nil, noFiles},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, directive, stderr := complete(t, tc.args...)
			if !slices.Equal(got, tc.want) || directive != tc.wantDirective || stderr != "" {
				t.Errorf("__complete %q = %q, directive %s, stderr %q; want %q, %s and nothing else on stderr",
					tc.args, got, directive, stderr, tc.want, tc.wantDirective)
			}
		})
	}
}

// A cluster that refuses or does not answer completes nothing, within the
// completion's timeout, and nothing of client-go's is printed.
func TestCompletionUnreachable(t *testing.T) {
	for _, s := range []struct{ name, server string }{{"refused", closedPort(t)}, {"silent", silentServer(t)}} {
		t.Run(s.name, func(t *testing.T) {
			testKubeconfig(t, s.server)
			for _, args := range [][]string{{"explain", ""}, {"explain", "configmaps", ""}, {"once", "-n", ""}} {
				start := time.Now()
				got, directive, stderr := complete(t, args...)
				if took := time.Since(start); took > completion.Timeout+2*time.Second {
					t.Errorf("__complete %q took %v, want at most about %v", args, took, completion.Timeout)
				}
				if len(got) != 0 || directive != ":4" || stderr != "" {
					t.Errorf("__complete %q = %q, directive %s, stderr %q; want nothing, :4, and nothing else on stderr", args, got, directive, stderr)
				}
			}
		})
	}
}
