package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// closedPort is an address on 127.0.0.1 that refuses connections until
// the test ends: a socket bound to it and not listening holds the port,
// so that no listener is given it. (A port listened on and closed again
// is handed out again now and then, to silentServer among others.)
func closedPort(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("https://127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
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

// closedPort's port is never given to a listener started after it, as
// silentServer is, right after it in the unreachable cases: a port merely
// closed again is handed out again now and then (with the helper that did
// so, this test failed within its first 150 tries, 5 times of 5), and the
// "refused" case then met the silent server.
func TestClosedPortStaysClosed(t *testing.T) {
	closed := map[string]bool{}
	for i := range 500 {
		closed[strings.TrimPrefix(closedPort(t), "https://")] = true
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := l.Addr().String()
		l.Close()
		if closed[got] {
			t.Fatalf("try %d: a listener was given %s, an address of closedPort", i, got)
		}
	}
}
