package cli

import (
	"net"
	"os"
	"path/filepath"
	"testing"
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
