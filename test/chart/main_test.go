package chart

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/cli"
	"github.com/kube-annotator/kube-annotator/test/harness"
)

var update = flag.Bool("update", false, "regenerate the chart's files/resources.yaml from the control plane's discovery")

var (
	// env is the control plane every test of the package shares.
	env *harness.Env
	// binary is the kube-annotator binary, for tests that run it.
	binary string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	var err error
	if env, err = harness.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "chart: stop control plane:", err)
		}
	}()
	dir, err := os.MkdirTemp("", "kube-annotator-chart-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binary, err = harness.BuildBinary(dir); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		return 1
	}
	return m.Run()
}

// kubeVersion is the control plane's version, as the chart is rendered for.
func kubeVersion() string { return "v" + harness.K8sVersion() }

// runCLI runs kube-annotator's command line in this process, as the
// administrator, and fails the test unless it exits 0.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append([]string{"kube-annotator"}, args...)
	args = append(args, "--kubeconfig", env.Kubeconfig)
	if code := cli.Main(context.Background(), args, cli.Streams{Out: &out, Err: &errOut}); code != 0 {
		t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}
