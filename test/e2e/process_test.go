package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// syncBuffer is a bytes.Buffer safe for a writer and readers at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a kube-annotator process started by a test.
type proc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan error
	// metrics and probes are the addresses of its servers.
	metrics, probes string
}

// freeAddr returns a loopback address with a port that was free just now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startRun starts `kube-annotator run` with the admin kubeconfig, metrics
// and probes on loopback, and args; the test's end stops it with SIGTERM
// and expects exit 0.
func startRun(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{stderr: &syncBuffer{}, done: make(chan error, 1), metrics: freeAddr(t), probes: freeAddr(t)}
	args = append([]string{"run", "--kubeconfig", env.Kubeconfig,
		"--metrics-bind-address", p.metrics, "--health-probe-bind-address", p.probes}, args...)
	p.cmd = exec.Command(binary, args...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.stop(t)
		}
		if t.Failed() {
			t.Logf("kube-annotator log:\n%s", p.stderr.String())
		}
	})
	return p
}

// stop sends SIGTERM and expects a clean exit within 10 s.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("kube-annotator exited with %v after SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("kube-annotator still running 10s after SIGTERM")
	}
}

// metric reads one of the process's own metrics, summed over its series.
func (p *proc) metric(t *testing.T, name string) float64 {
	t.Helper()
	return h.MetricValue(p.scrape(t), name, nil)
}

// tryMetric is metric for polls: the server may not be up yet.
func (p *proc) tryMetric(name string) (float64, error) {
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return h.MetricValue(body, name, nil), err
}

// waitMetric waits until metric name has value want.
func (p *proc) waitMetric(t *testing.T, timeout time.Duration, name string, want float64) {
	t.Helper()
	var got float64
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = p.tryMetric(name)
		return err == nil && got == want, nil
	})
	if err != nil {
		t.Fatalf("metric %s = %v after %v, want %v", name, got, timeout, want)
	}
}

// ready reports the HTTP status of /readyz.
func (p *proc) ready(t *testing.T) int {
	t.Helper()
	resp, err := http.Get("http://" + p.probes + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// errorLines counts the klog error lines (they start with "E") logged so far
// that contain s.
func (p *proc) errorLines(s string) int {
	n := 0
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.HasPrefix(line, "E") && strings.Contains(line, s) {
			n++
		}
	}
	return n
}

func (p *proc) String() string { return fmt.Sprintf("kube-annotator pid %d", p.cmd.Process.Pid) }

// scrape returns the process's /metrics.
func (p *proc) scrape(t *testing.T) []byte {
	t.Helper()
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		t.Fatalf("scrape metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// waitLog waits until want lines of p's log contain both a and b.
func waitLog(t *testing.T, p *proc, timeout time.Duration, a, b string, want int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return p.logLines(a, b) >= want, nil
	})
	if err != nil {
		t.Fatalf("%d log lines with %q and %q after %v, want %d", p.logLines(a, b), a, b, timeout, want)
	}
}

// logLines counts the lines of p's log that contain every one of subs.
func (p *proc) logLines(subs ...string) int {
	n := 0
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}
