package cli

import (
	"strings"
	"testing"
)

// rbac refuses, as usage errors naming the flag, names the API server
// would reject, before it reads the rules or asks the cluster.
func TestRBACNames(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--name", "Bad Name"}, `error: --name "Bad Name": a lowercase RFC 1123 subdomain must consist of`},
		{[]string{"-n", "Bad_NS"}, `error: --namespace "Bad_NS": a lowercase RFC 1123 label must consist of`},
		{[]string{"-n", "a.b"}, `error: --namespace "a.b": must not contain dots`},
		{[]string{"--leader-election-id", "Lease!"}, `error: --leader-election-id "Lease!": a lowercase RFC 1123 subdomain`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := invoke("kube-annotator", append([]string{"rbac", "--rules", "none.yaml"}, tc.args...)...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.want) || !strings.HasSuffix(stderr, "\nSee 'kube-annotator rbac --help'.\n") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q…", code, stdout, stderr, tc.want)
			}
		})
	}
}
