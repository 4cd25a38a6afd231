package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// StopTimeout is how long a process a test started may take to exit
// after SIGTERM.
const StopTimeout = 10 * time.Second

// Process is a process a test started: the kube-annotator binary, or
// kubectl running it as a plugin.
type Process struct {
	*Child
	// Metrics and Probes are the addresses of its servers, when StartRun
	// started it.
	Metrics, Probes string
}

// StartProcess starts cmd as name, its stdout and stderr in a file of the
// test's temporary directory. Unless it has exited, the test's end stops
// it as Terminate does; if the test failed, its output is logged.
func StartProcess(t testing.TB, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	return StartProcessWithLog(t, name, cmd, filepath.Join(t.TempDir(), "output.log"))
}

// StartProcessWithLog is StartProcess with stdout and stderr appended to
// the file at logFile.
func StartProcessWithLog(t testing.TB, name string, cmd *exec.Cmd, logFile string) *Process {
	t.Helper()
	c, err := StartChildWithLog(name, cmd, logFile)
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{Child: c}
	t.Cleanup(func() {
		if done, _ := p.Exited(); !done {
			p.Terminate(t)
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

// StartRun starts `binary run` with metrics and probes on loopback, and
// args; the test's end stops it with SIGTERM and expects exit 0.
func StartRun(t testing.TB, binary string, args ...string) *Process {
	t.Helper()
	return StartRunWithLog(t, binary, filepath.Join(t.TempDir(), "output.log"), args...)
}

// StartRunWithLog is StartRun with the process's output appended to the
// file at logFile.
func StartRunWithLog(t testing.TB, binary, logFile string, args ...string) *Process {
	t.Helper()
	metrics, probes := FreeAddr(t), FreeAddr(t)
	args = append([]string{"run", "--metrics-bind-address", metrics, "--health-probe-bind-address", probes}, args...)
	p := StartProcessWithLog(t, "kube-annotator", exec.Command(binary, args...), logFile)
	p.Metrics, p.Probes = metrics, probes
	return p
}

// handedOut holds the addresses FreeAddr returned, which it does not
// return again.
var handedOut sync.Map

// FreeAddr returns a loopback address with a port that was free just now
// and that it has not returned before in this test binary: a port is free
// again once closed, so two processes started one after the other could
// otherwise be given the same one, and the second would fail to listen.
func FreeAddr(t testing.TB) string {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if _, taken := handedOut.LoadOrStore(addr, true); !taken {
			return addr
		}
	}
	t.Fatal("no free loopback port that was not handed out before, in 100 tries")
	return ""
}

// Terminate sends SIGTERM and expects a clean exit within StopTimeout; it
// kills the process after that.
func (p *Process) Terminate(t testing.TB) {
	t.Helper()
	switch err := p.Stop(StopTimeout); {
	case errors.Is(err, ErrKilled):
		t.Errorf("%s still running %v after SIGTERM; killed it", p.Name, StopTimeout)
	case err != nil:
		t.Errorf("%s exited with %v after SIGTERM", p.Name, err)
	}
}

// MustRun fails the test at once if p has exited; when says when that
// would have happened.
func (p *Process) MustRun(t testing.TB, when string) {
	t.Helper()
	if done, err := p.Exited(); done {
		t.Fatalf("%s exited %s (%s)", p.Name, when, ExitText(err))
	}
}

// Output returns what p has logged so far.
func (p *Process) Output(t testing.TB) string {
	t.Helper()
	out, err := p.ReadLog()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// LogLines counts the lines of p's log that contain every one of subs.
func (p *Process) LogLines(t testing.TB, subs ...string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(p.Output(t), "\n") {
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

// ErrorLines counts the klog error lines (they start with "E") logged so
// far that contain s.
func (p *Process) ErrorLines(t testing.TB, s string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(p.Output(t), "\n") {
		if strings.HasPrefix(line, "E") && strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// ReadMetrics reads p's /metrics.
func (p *Process) ReadMetrics() ([]byte, error) {
	resp, err := http.Get("http://" + p.Metrics + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// Scrape returns the process's /metrics.
func (p *Process) Scrape(t testing.TB) []byte {
	t.Helper()
	body, err := p.ReadMetrics()
	if err != nil {
		t.Fatalf("scrape metrics: %v", err)
	}
	return body
}

// Metric reads one of the process's own metrics, summed over its series.
func (p *Process) Metric(t testing.TB, name string) float64 {
	t.Helper()
	return promtext.MetricValue(p.Scrape(t), name, nil)
}

// Writes reads the controller's kube_annotator_writes_total with result.
func (p *Process) Writes(t testing.TB, result string) int {
	t.Helper()
	return int(promtext.MetricValue(p.Scrape(t), "kube_annotator_writes_total", map[string]string{"result": result}))
}

// TryMetric is Metric for polls: the server may not be up yet.
func (p *Process) TryMetric(name string) (float64, error) {
	body, err := p.ReadMetrics()
	return promtext.MetricValue(body, name, nil), err
}

// WaitMetric waits until metric name has value want.
func (p *Process) WaitMetric(t testing.TB, timeout time.Duration, name string, want float64) {
	t.Helper()
	p.WaitSeries(t, timeout, name, nil, want)
}

// WaitSeries waits until the series of metric name matching match (all of
// them, summed, when match is nil) has value want.
func (p *Process) WaitSeries(t testing.TB, timeout time.Duration, name string, match map[string]string, want float64) {
	t.Helper()
	var got float64
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		body, err := p.ReadMetrics()
		got = promtext.MetricValue(body, name, match)
		return err == nil && got == want, nil
	})
	if err != nil {
		series := name
		if match != nil {
			series = fmt.Sprintf("%s%v", name, match)
		}
		t.Fatalf("metric %s = %v after %v, want %v", series, got, timeout, want)
	}
}

// Ready reports the HTTP status of /readyz; 0 when it does not answer.
func (p *Process) Ready(t testing.TB) int {
	t.Helper()
	resp, err := http.Get("http://" + p.Probes + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Readyz returns the body of /readyz; "" when it does not answer.
func (p *Process) Readyz(t testing.TB) string {
	t.Helper()
	resp, err := http.Get("http://" + p.Probes + "/readyz")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
