package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
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
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
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
	maps.DeleteFunc(delta, func(r h.Request, _ float64) bool {
		return r.Verb == "PUT" && r.Group == "coordination.k8s.io" && r.Resource == "leases"
	})
	if n := delta.Writes(); n != 0 {
		t.Errorf("%s made %d write requests, want 0: %s", args[0], n, delta.WriteSeries())
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

// startRun starts `kube-annotator run` with the admin kubeconfig, metrics
// and probes on loopback, and args; the test's end stops it with SIGTERM
// and expects exit 0. On the shared control plane, unless args name one,
// the controllers of one test keep their record in a namespace of that
// test's own: the shared one lists what other tests wrote, which a
// controller that watches every namespace would prune meanwhile. On a
// control plane of the test's own (args name a --kubeconfig), the record
// stays in "default", out of the namespace whose ConfigMaps the test
// counts (outside a cluster it would follow -n).
func startRun(t *testing.T, args ...string) *proc.Process {
	t.Helper()
	return startRunWithLog(t, filepath.Join(t.TempDir(), "output.log"), args...)
}

// startRunWithLog is startRun with the process's output (klog writes to
// stderr) appended to the file at logFile.
func startRunWithLog(t *testing.T, logFile string, args ...string) *proc.Process {
	t.Helper()
	if !slices.Contains(args, "--record-namespace") {
		ns := "default"
		if !slices.Contains(args, "--kubeconfig") {
			ns = recordNamespace(t)
		}
		args = append(args, "--record-namespace", ns)
	}
	return proc.StartRunWithLog(t, binary, logFile, append([]string{"--kubeconfig", env.Kubeconfig}, args...)...)
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

// waitLog waits until want lines of p's log contain both a and b.
func waitLog(t *testing.T, p *proc.Process, timeout time.Duration, a, b string, want int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return p.LogLines(t, a, b) >= want, nil
	})
	if err != nil {
		t.Fatalf("%d log lines with %q and %q after %v, want %d", p.LogLines(t, a, b), a, b, timeout, want)
	}
}
