package e2e

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// `make demo 2>&1 | tee demo.log`, then Ctrl-C: tee ends with the demo's
// first line after the signal unread. The demo still stops every process
// it started (etcd and kube-apiserver, in process groups of their own,
// included) and removes its temporary directories.
func TestDemoInterruptedThroughAPipe(t *testing.T) {
	demo := filepath.Join(t.TempDir(), "demo")
	build := exec.Command("go", "build", "-o", demo, "./test/demo")
	build.Dir = h.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./test/demo: %v\n%s", err, out)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	cmd := exec.Command(demo, "--binary", binary, "--rules", "rules.yaml")
	cmd.Dir = h.RepoRoot()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var out strings.Builder
	lines := bufio.NewScanner(r)
	for lines.Scan() && !strings.Contains(lines.Text(), "Press Ctrl-C to stop.") {
		out.WriteString(lines.Text() + "\n")
	}
	children := childPIDs(t, cmd.Process.Pid)
	dirs := tempDirs(t, out.String(), children, started)
	t.Cleanup(func() { // what a failed demo left behind
		for _, pid := range children {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, d := range dirs {
			_ = os.RemoveAll(d)
		}
	})
	if len(children) != 4 || len(dirs) < 2 {
		t.Fatalf("demo (pid %d) has children %v and temporary directories %v, want etcd, kube-apiserver, kube-controller-manager, kube-annotator and at least 2:\n%s",
			cmd.Process.Pid, children, dirs, out.String())
	}

	r.Close() // tee is gone
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() {
			t.Errorf("demo killed by %v after SIGINT, want it to clean up and exit", ee.Sys().(syscall.WaitStatus).Signal())
		}
	case <-time.After(90 * time.Second):
		t.Fatal("demo still running 90s after SIGINT")
	}
	waitFor(t, 10*time.Second, "the demo's children gone", func() bool {
		for _, pid := range children {
			if syscall.Kill(pid, 0) == nil {
				return false
			}
		}
		return true
	})
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("temporary directory %s left after SIGINT (stat: %v)", d, err)
		}
	}
}

// childPIDs returns the processes whose parent is pid.
func childPIDs(t *testing.T, pid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			out = append(out, child)
		}
	}
	return out
}

// tempDirRE matches the paths of directories directly under the
// temporary directory.
var tempDirRE = regexp.MustCompile(regexp.QuoteMeta(os.TempDir()) + `/[^/\s=,"]+`)

// demoDirPrefixes are the names the demo's temporary directories start
// with: its own, the control plane's (test/harness) and envtest's.
var demoDirPrefixes = []string{"kube-annotator-demo-", "kube-annotator-e2e-", "k8s_test_framework_"}

// tempDirs returns the directories under the temporary directory that the
// demo's output and its children's command lines name, and that the demo
// made: named as it names them, and made since it started. Any other
// path there (the clone the tests run in may be one) is not the demo's,
// and is neither checked nor removed.
func tempDirs(t *testing.T, output string, pids []int, started time.Time) []string {
	t.Helper()
	text := output
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		text += " " + strings.ReplaceAll(string(b), "\x00", " ")
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range tempDirRE.FindAllString(text, -1) {
		ours := slices.ContainsFunc(demoDirPrefixes, func(p string) bool { return strings.HasPrefix(filepath.Base(d), p) })
		if !ours || strings.HasPrefix(h.RepoRoot()+"/", d+"/") || strings.HasPrefix(binary, d+"/") {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !seen[d] && !fi.ModTime().Before(started.Add(-time.Second)) {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
