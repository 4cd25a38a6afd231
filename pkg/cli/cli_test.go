package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/cli/help"
	"github.com/spf13/cobra"
)

// invoke runs the command line args as the binary at arg0 would.
func invoke(arg0 string, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = Main(context.Background(), append([]string{arg0}, args...), Streams{Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

// run's own checks of its flags are usage errors too, naming the flag.
func TestRunFlagValidation(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "0"}, "error: --workers must be at least 1, got 0\n"},
		{[]string{"--resync-period", "-1m"}, "error: --resync-period must not be negative, got -1m0s\n"},
		{[]string{"--max-changes", "-1"}, "error: --max-changes must not be negative, got -1 (0 turns the guard off)\n"},
		{[]string{"--kube-api-qps", "0"}, "error: --kube-api-qps must not be 0: a positive limit, or a negative value for none\n"},
		{[]string{"--kube-api-qps", "5", "--kube-api-burst", "0"}, "error: --kube-api-burst must be at least 1, got 0\n"},
		{[]string{"--exclude-namespaces", "["}, "error: --exclude-namespaces: invalid namespace glob \"[\": syntax error in pattern\n"},
		{[]string{"--leader-elect", "--leader-election-lease-duration", "5s"}, "error: --leader-election-lease-duration (5s) must be longer than --leader-election-renew-deadline (10s)\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := invoke("kube-annotator", append([]string{"run"}, tc.args...)...)
			want := tc.want + "See 'kube-annotator run --help'.\n"
			if code != 2 || stderr != want || stdout != "" {
				t.Errorf("run %q: exit %d, stdout %q, stderr %q; want exit 2 and stderr %q", tc.args, code, stdout, stderr, want)
			}
		})
	}
}

// Every command but version and completion takes klog's -v, which the Troubleshooting
// docs tell users to raise.
func TestVerbosityFlag(t *testing.T) {
	for _, c := range commands() {
		help, _, _ := invoke("kube-annotator", c.Name(), "--help")
		want := c.Name() != "version" && c.Name() != "completion"
		if got := strings.Contains(help, "-v, --v Level"); got != want {
			t.Errorf("%s --help lists -v: %v, want %v", c.Name(), got, want)
		}
	}
}

// The top level answers help, --help, --version and version; an unknown
// command is a usage error.
func TestTopLevel(t *testing.T) {
	tests := []struct {
		args                   []string
		wantCode               int
		wantStdout, wantStderr string
	}{
		{[]string{"help"}, 0, "Usage:\n  kube-annotator COMMAND [flags]", ""},
		{[]string{"--help"}, 0, "Usage:\n  kube-annotator COMMAND [flags]", ""},
		{[]string{"--version"}, 0, "kube-annotator ", ""},
		{[]string{"version"}, 0, "kube-annotator ", ""},
		{[]string{"help", "nope"}, 2, "", "error: unknown command \"nope\" for \"kube-annotator\"\nSee 'kube-annotator --help'.\n"},
		{[]string{"nope"}, 2, "", "error: unknown command \"nope\" for \"kube-annotator\"\nSee 'kube-annotator --help'.\n"},
		{[]string{"onec"}, 2, "", "error: unknown command \"onec\" for \"kube-annotator\"; did you mean \"once\"?\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := invoke("kube-annotator", tc.args...)
			if code != tc.wantCode || !strings.Contains(stdout, tc.wantStdout) || !strings.Contains(stderr, tc.wantStderr) ||
				(tc.wantStdout == "") != (stdout == "") || (tc.wantStderr == "") != (stderr == "") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
					code, stdout, stderr, tc.wantCode, tc.wantStdout, tc.wantStderr)
			}
		})
	}
}

// Every command prints an error that is not a usage error in one format,
// and exits 1 (diff 2, as kubectl diff); checks that once and diff made on
// their own are usage errors like any other.
func TestErrorFormats(t *testing.T) {
	missing := t.TempDir() + "/none.yaml"
	tests := []struct {
		args       []string
		wantCode   int
		wantStderr string
	}{
		{[]string{"check", "--offline", "--rules", missing}, 1, "error: open " + missing + ": "},
		{[]string{"once", "--rules", missing}, 1, "error: open " + missing + ": "},
		{[]string{"diff", "--rules", missing}, 2, "error: open " + missing + ": "},
		{[]string{"explain", "cm/a", "--rules", missing}, 1, "error: open " + missing + ": "},
		{[]string{"once", "--workers", "0"}, 2, "error: --workers must be at least 1, got 0\nSee 'kube-annotator once --help'.\n"},
		{[]string{"diff", "-o", "wide"}, 2, "error: --output must be json or yaml, got \"wide\"\nSee 'kube-annotator diff --help'.\n"},
		{[]string{"diff", "--kube-api-qps", "0"}, 2, "error: --kube-api-qps must not be 0: a positive limit, or a negative value for none\nSee 'kube-annotator diff --help'.\n"},
		{[]string{"explain", "cm/a", "--exclude-namespaces", "["}, 2, "error: --exclude-namespaces: invalid namespace glob"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, code := invoke("kube-annotator", tc.args...)
			if code != tc.wantCode || !strings.HasPrefix(stderr, tc.wantStderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and stderr starting %q", code, stderr, tc.wantCode, tc.wantStderr)
			}
		})
	}
}

// commands are the subcommands that the help lists, as run by
// kube-annotator.
func commands() []*cobra.Command {
	return help.Subcommands((&env{prog: "kube-annotator"}).newRootCommand())
}
