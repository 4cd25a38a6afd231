// Package e2e proves the controller's behaviour on a real control plane
// (etcd + kube-apiserver); see test/harness.
package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kube-annotator/kube-annotator/test/harness"
)

var (
	env *harness.Env
	// binary is the kube-annotator binary built for tests that run it.
	binary string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	env, err = harness.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stop control plane:", err)
		}
	}()
	dir, err := os.MkdirTemp("", "kube-annotator-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "kube-annotator")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Dir = harness.RepoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build kube-annotator:", err)
		return 1
	}
	return m.Run()
}

// runCLI runs the kube-annotator binary and returns its output and exit code.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}
