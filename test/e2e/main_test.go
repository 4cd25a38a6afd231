package e2e

import (
	"fmt"
	"os"
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
	// Which server the suite runs on, as the server says.
	fmt.Fprintf(os.Stderr, "e2e: %s (binaries from %s)\n", env.Features, harness.AssetsDir())
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
	if binary, err = harness.BuildBinary(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return m.Run()
}
