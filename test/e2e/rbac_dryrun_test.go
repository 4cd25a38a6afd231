package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// Every variant of rbac's output is accepted by this API server, as a
// server-side apply dry run: on every Kubernetes version the suite runs
// on, including one that does not serve the MutatingAdmissionPolicies
// that --admission-policies grants (RBAC takes rules for resources a
// server does not serve).
func TestRBACServerDryRun(t *testing.T) {
	ns := env.NewNamespace(t)
	for i, tc := range []struct {
		name  string
		flags []string
		want  []string
	}{
		{"defaults", nil, []string{"kind: ClusterRole\n", "kind: Role\n", "- leases"}},
		{"events and admission policies", []string{"--events", "--admission-policies"}, []string{"- mutatingadmissionpolicies", "- events"}},
		{"no leader election", []string{"--leader-election=false"}, []string{"kind: ClusterRoleBinding"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A name of its own: the ClusterRole named kube-annotator
			// another test applied would conflict with this field manager.
			name := fmt.Sprintf("%s-%d", ns, i)
			args := append([]string{"rbac", "--rules", rulesPath(), "-n", ns, "--name", name, "--kubeconfig", env.Kubeconfig}, tc.flags...)
			manifests, stderr, code := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("rbac %v: exit %d: %s", tc.flags, code, stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(manifests, want) {
					t.Errorf("rbac %v: output lacks %q:\n%s", tc.flags, want, manifests)
				}
			}
			out, err := kubectl(t, manifests, "apply", "--server-side", "--dry-run=server", "--field-manager", "e2e", "-f", "-")
			if err != nil {
				t.Fatalf("%s refuses rbac %v (server-side dry run): %v\n%s", env.Features.Version, tc.flags, err, manifests)
			}
			if n := strings.Count(out, "(server dry run)"); n < 4 {
				t.Errorf("the dry run applied %d objects, want at least 4:\n%s", n, out)
			}
		})
	}
}
