package e2e

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// kubectl completes "kubectl annotator …" through kubectl_complete-annotator,
// installed beside the plugin as make install-plugin does: commands and
// flags from the plugin, and from the cluster, as kubectl's own
// completion has them, resources, the names of a resource's objects in -n,
// and namespaces; contexts from the kubeconfig. Nothing but candidates is
// printed on stdout.
func TestCompletionFromCluster(t *testing.T) {
	ns := env.NewNamespace(t)
	for _, name := range []string{"web", "settings"} {
		env.Create(t, h.ConfigMaps, ns, h.FromYAML(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+"}\n"))
	}
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "kubectl-annotator")); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("../../deploy/krew/kubectl_complete-annotator")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "kubectl_complete-annotator"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	contexts := slices.Sorted(maps.Keys(kubeconfig.Contexts))

	tests := []struct {
		name string
		args []string
		// want are all the candidates, or, with some, some of them.
		want []string
		some bool
	}{
		{"commands", []string{"ex"}, []string{"explain"}, false},
		{"flags", []string{"check", "--off"}, []string{"--offline"}, false},
		{"resources", []string{"explain", "config"}, []string{"configmaps"}, false},
		{"every resource", []string{"explain", ""}, []string{"configmaps", "deployments.apps", "namespaces", "pods"}, true},
		{"names in -n", []string{"explain", "-n", ns, "configmaps", ""}, []string{"settings", "web"}, false},
		{"names after RESOURCE/", []string{"explain", "-n", ns, "configmaps/w"}, []string{"configmaps/web"}, false},
		{"namespaces", []string{"diff", "-n", ns}, []string{ns}, false},
		{"contexts", []string{"once", "--context", ""}, contexts, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(h.AssetsDir(), "kubectl"), append([]string{"__complete", "annotator"}, tc.args...)...)
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+env.Kubeconfig)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("kubectl __complete annotator %q: %v", tc.args, err)
			}
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if last := lines[len(lines)-1]; last != ":4" {
				t.Errorf("directive %q, want :4 (no file completion)", last)
			}
			var got []string
			for _, l := range lines[:len(lines)-1] {
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
			if tc.some {
				for _, w := range tc.want {
					if !slices.Contains(got, w) {
						t.Errorf("kubectl __complete annotator %q = %q, want %q among them", tc.args, got, w)
					}
				}
			} else if !slices.Equal(got, tc.want) {
				t.Errorf("kubectl __complete annotator %q = %q, want %q", tc.args, got, tc.want)
			}
		})
	}
}
