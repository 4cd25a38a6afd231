package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// silentServer listens on 127.0.0.1, accepts connections and never
// answers; it is closed when the test ends.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return "https://" + l.Addr().String()
}

// closedPort is an address on 127.0.0.1 that nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "https://" + addr
}

// A cluster that cannot be reached is said in one line, two for check
// (how to check without one), naming the server and the likely cause, by
// every command that talks to it, within its default request timeout; and
// nothing else is said, not even "not served".
func TestUnreachableCluster(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	content := "rules:\n- name: team\n  resources: [configmaps, frigates.ship.nwiizo.dev]\n  annotations: {team: a}\n"
	if err := os.WriteFile(rulesFile, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	servers := []struct{ name, server, cause string }{
		{"connection refused", closedPort(t), "connection refused: is the cluster running"},
		{"no answer", silentServer(t), "no answer within 15s (--request-timeout)"},
	}
	commands := []struct {
		args     []string
		wantCode int
		hint     string // a second line
	}{
		{[]string{"once"}, 1, ""},
		{[]string{"diff"}, 2, ""},
		{[]string{"check"}, 1, offlineHint},
		{[]string{"rbac"}, 1, ""},
		{[]string{"admission"}, 1, ""},
		{[]string{"explain", "configmaps/a"}, 1, ""},
	}
	for _, s := range servers {
		for _, c := range commands {
			t.Run(s.name+"/"+c.args[0], func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				stdout, stderr, code := invoke("kube-annotator", append(c.args, "--rules", rulesFile, "--server", s.server)...)
				if took := time.Since(start); took > 30*time.Second {
					t.Errorf("took %v, want it said within the default request timeout", took)
				}
				want := "error: API server " + s.server + ": " + s.cause
				lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
				wantLines := 1
				if c.hint != "" {
					wantLines = 2
				}
				if code != c.wantCode || stdout != "" || len(lines) != wantLines || !strings.HasPrefix(lines[0], want) ||
					c.hint != "" && lines[1] != c.hint {
					t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, no stdout, and on stderr %d line(s): %s…",
						code, stdout, stderr, c.wantCode, wantLines, want)
				}
			})
		}
	}
}

// An empty kubeconfig given with --kubeconfig is said to have no cluster.
func TestEmptyKubeconfig(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, stderr, code := invoke("kube-annotator", "rbac", "--rules", "../../rules.yaml", "--kubeconfig", empty)
	if want := "error: no cluster configured: --kubeconfig " + empty + " has no cluster\n"; code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
}
