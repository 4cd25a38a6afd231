package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/cli"
)

// exampleWarnings are the warnings check prints for an example, which its
// header explains; every other example checks without one.
var exampleWarnings = map[string]string{
	"pod-security.yaml":  `rule "pod-security" targets namespaces`,
	"tenants.yaml":       `rule "pod-security" targets namespaces`,
	"rollout-roles.yaml": `owner resource "rollouts.argoproj.io": resource "rollouts.argoproj.io" is not built into Kubernetes`,
}

// exampleCRDs are the CRD files, from the repository's root, that check
// --offline of an example is given, as its header says.
var exampleCRDs = map[string]string{
	"frigate.yaml": "deploy/crd/ship.nwiizo.dev_frigates.yaml",
}

// Every example passes `check --offline`, says in its header how to check
// it, and is listed in examples/README.md. (TestJSONSchemaAcceptsValidFiles
// in pkg/rules validates them against the JSON Schema.)
func TestExamplesCheckOffline(t *testing.T) {
	dir := filepath.Join("..", "..", "examples")
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 5 {
		t.Fatalf("examples/ holds %d rules files, want at least 5", len(paths))
	}
	index, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			args := []string{"kube-annotator", "check", "--offline", "--rules", path}
			how := "kube-annotator check --offline --rules examples/" + name
			if crd := exampleCRDs[name]; crd != "" {
				args = append(args, "--crd", filepath.Join("..", "..", crd))
				how += " --crd " + crd
			}
			var out, errOut bytes.Buffer
			code := cli.Main(context.Background(), args, cli.Streams{Out: &out, Err: &errOut})
			if code != 0 || !strings.HasPrefix(out.String(), path+": valid (") {
				t.Errorf("check --offline: exit %d, stdout %q, stderr %q; want exit 0 and %q", code, out.String(), errOut.String(), path+": valid (…)")
			}
			want := exampleWarnings[name]
			if got := errOut.String(); want == "" && got != "" || !strings.Contains(got, want) {
				t.Errorf("check --offline warns %q; want %q", got, want)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(data, []byte(how)) {
				t.Errorf("the header does not say how to check it: %q", how)
			}
			if link := fmt.Sprintf("](%s)", name); !bytes.Contains(index, []byte(link)) {
				t.Errorf("examples/README.md does not link it")
			}
		})
	}
}
