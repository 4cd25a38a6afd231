package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// runCmd runs cmd to its end, with stdin as its input unless it is "", and
// returns its output and exit code. It fails the test if cmd cannot start.
func runCmd(t *testing.T, cmd *exec.Cmd, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("run %s: %v", cmd, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// runCLI runs the kube-annotator binary and returns its output and exit code.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCmd(t, exec.Command(binary, args...), "")
}

// runCLIReadOnly is runCLI for a command that must not write: it fails
// the test if the API server served a write request while it ran (other
// than its own Lease heartbeat).
func runCLIReadOnly(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	before, err := env.APIRequests(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCLI(t, args...)
	after, err := env.APIRequests(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	delta := after.Sub(before)
	delete(delta, h.Request{Verb: "PUT", Group: "coordination.k8s.io", Resource: "leases"})
	if n := delta.Writes(); n != 0 {
		t.Errorf("%s made %d write requests, want 0: %v", args[0], n, delta)
	}
	return stdout, stderr, code
}

// kubectlCmd is a command that runs the kubectl built with the control
// plane, as the administrator (KUBECONFIG).
func kubectlCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(h.AssetsDir(), "kubectl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	return cmd
}

// kubectl runs kubectlCmd(args) with stdin and returns its output; the
// error names the exit code and holds kubectl's stderr.
func kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	out, errOut, code := runCmd(t, kubectlCmd(args...), stdin)
	if code != 0 {
		return out, fmt.Errorf("kubectl %s: exit status %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out, nil
}

// stopTimeout is how long a process a test started may take to exit
// after SIGTERM.
const stopTimeout = 10 * time.Second

// proc is a process a test started: the kube-annotator binary, or kubectl
// running it as a plugin.
type proc struct {
	*h.Child
	// metrics and probes are the addresses of its servers, when startRun
	// started it.
	metrics, probes string
}

// startProc starts cmd as name, its stdout and stderr in a file of the
// test's temporary directory. Unless it has exited, the test's end stops it
// as stop does; if the test failed, its output is logged.
func startProc(t *testing.T, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	c, err := h.StartChildWithLog(name, cmd, filepath.Join(t.TempDir(), "output.log"))
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{Child: c}
	t.Cleanup(func() {
		if done, _ := p.Exited(); !done {
			p.stop(t)
		}
		if !t.Failed() {
			return
		}
		if out, err := p.ReadLog(); err != nil {
			t.Log(err)
		} else {
			t.Logf("%s log:\n%s", name, out)
		}
	})
	return p
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
// and expects exit 0. On the shared control plane, unless args name one,
// the controllers of one test keep their record in a namespace of that
// test's own: the shared one lists what other tests wrote, which a
// controller that watches every namespace would prune meanwhile.
func startRun(t *testing.T, args ...string) *proc {
	t.Helper()
	metrics, probes := freeAddr(t), freeAddr(t)
	if !slices.Contains(args, "--record-namespace") && !slices.Contains(args, "--kubeconfig") {
		args = append(args, "--record-namespace", recordNamespace(t))
	}
	args = append([]string{"run", "--kubeconfig", env.Kubeconfig,
		"--metrics-bind-address", metrics, "--health-probe-bind-address", probes}, args...)
	p := startProc(t, "kube-annotator", exec.Command(binary, args...))
	p.metrics, p.probes = metrics, probes
	return p
}

// recordNamespaces are the record namespaces of startRun, by top-level
// test, so that a controller a test restarts finds its record again.
var recordNamespaces sync.Map

// recordNamespace returns the record namespace of t's top-level test.
func recordNamespace(t *testing.T) string {
	t.Helper()
	test, _, _ := strings.Cut(t.Name(), "/")
	if ns, ok := recordNamespaces.Load(test); ok {
		return ns.(string)
	}
	ns := env.NewNamespace(t)
	recordNamespaces.Store(test, ns)
	return ns
}

// stop sends SIGTERM and expects a clean exit within stopTimeout; it kills
// the process after that.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	switch err := p.Stop(stopTimeout); {
	case errors.Is(err, h.ErrKilled):
		t.Errorf("%s still running %v after SIGTERM; killed it", p.Name, stopTimeout)
	case err != nil:
		t.Errorf("%s exited with %v after SIGTERM", p.Name, err)
	}
}

// mustRun fails the test at once if p has exited; when says when that
// would have happened.
func (p *proc) mustRun(t *testing.T, when string) {
	t.Helper()
	if done, err := p.Exited(); done {
		t.Fatalf("%s exited %s (%s)", p.Name, when, h.ExitText(err))
	}
}

// output returns what p has logged so far.
func (p *proc) output(t *testing.T) string {
	t.Helper()
	out, err := p.ReadLog()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readMetrics reads p's /metrics.
func (p *proc) readMetrics() ([]byte, error) {
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// scrape returns the process's /metrics.
func (p *proc) scrape(t *testing.T) []byte {
	t.Helper()
	body, err := p.readMetrics()
	if err != nil {
		t.Fatalf("scrape metrics: %v", err)
	}
	return body
}

// metric reads one of the process's own metrics, summed over its series.
func (p *proc) metric(t *testing.T, name string) float64 {
	t.Helper()
	return h.MetricValue(p.scrape(t), name, nil)
}

// writes reads the controller's kube_annotator_writes_total with result.
func (p *proc) writes(t *testing.T, result string) int {
	t.Helper()
	return int(h.MetricValue(p.scrape(t), "kube_annotator_writes_total", map[string]string{"result": result}))
}

// tryMetric is metric for polls: the server may not be up yet.
func (p *proc) tryMetric(name string) (float64, error) {
	body, err := p.readMetrics()
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
func (p *proc) errorLines(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(p.output(t), "\n") {
		if strings.HasPrefix(line, "E") && strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// waitLog waits until want lines of p's log contain both a and b.
func waitLog(t *testing.T, p *proc, timeout time.Duration, a, b string, want int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return p.logLines(t, a, b) >= want, nil
	})
	if err != nil {
		t.Fatalf("%d log lines with %q and %q after %v, want %d", p.logLines(t, a, b), a, b, timeout, want)
	}
}

// logLines counts the lines of p's log that contain every one of subs.
func (p *proc) logLines(t *testing.T, subs ...string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(p.output(t), "\n") {
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
