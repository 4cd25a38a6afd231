package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// invoke runs the command line args as the binary at arg0 would.
func invoke(arg0 string, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = Main(context.Background(), append([]string{arg0}, args...), Streams{Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

// A usageCase is a bad invocation of a command and the error line it prints.
type usageCase struct {
	name string
	args []string
	want string
}

// Every command reports a bad invocation as kubectl does, on stderr, and
// exits 2 without doing anything.
func TestUsageErrors(t *testing.T) {
	// A flag of each command that takes a number; version takes none.
	numeric := map[string]string{
		"run": "--workers", "once": "--workers", "diff": "--kube-api-qps",
		"check": "--kube-api-qps", "rbac": "--kube-api-burst", "version": "",
		"explain": "--kube-api-qps", "admission": "--kube-api-qps",
	}
	// Commands that take one RESOURCE/NAME argument.
	oneObject := map[string]bool{"explain": true}
	// Commands whose only flag is -o.
	onlyOutput := map[string]bool{"version": true}
	for _, c := range commands() {
		flag, ok := numeric[c.name]
		if !ok {
			t.Errorf("command %s: no flag taking a number listed for it in this test", c.name)
			continue
		}
		tests := []usageCase{
			{"unknown flag", []string{"--rule", "rules.yaml"}, "error: unknown flag: --rule"},
			{"unknown shorthand", []string{"-q"}, "error: unknown shorthand flag: 'q' in -q"},
			{"unexpected argument", []string{"extra"}, `error: unexpected argument "extra"`},
			{"unexpected arguments", []string{"a", "b"}, `error: unexpected argument "a"`},
		}
		if oneObject[c.name] {
			tests[2] = usageCase{"no argument", nil, "error: want one RESOURCE/NAME, got 0 arguments"}
			tests[3] = usageCase{"two arguments", []string{"pods/a", "pods/b"}, "error: want one RESOURCE/NAME, got 2 arguments"}
			tests = append(tests, usageCase{"bad output", []string{"pods/a", "-o", "wide"}, `error: --output must be json or yaml, got "wide"`})
		}
		if onlyOutput[c.name] {
			tests = append(tests, usageCase{"bad output", []string{"-o", "wide"}, `error: --output must be json or yaml, got "wide"`})
		}
		if flag != "" {
			tests = append(tests, usageCase{"invalid value", []string{flag, "abc"}, `error: invalid argument "abc" for "` + flag + `" flag: must be a`})
		} else if help, _, _ := invoke("kube-annotator", c.name, "--help"); strings.Contains(strings.ReplaceAll(help, "-o, --output", ""), "--") {
			t.Errorf("%s is listed as taking no flags, but its help lists some:\n%s", c.name, help)
		}
		for _, tc := range tests {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				for _, inv := range []struct{ arg0, prog string }{
					{"/usr/local/bin/kube-annotator", "kube-annotator"},
					{"/usr/local/bin/kubectl-annotator", "kubectl annotator"},
				} {
					stdout, stderr, code := invoke(inv.arg0, append([]string{c.name}, tc.args...)...)
					lines := strings.Split(stderr, "\n")
					if code != 2 || len(lines) != 3 || !strings.HasPrefix(lines[0], tc.want) ||
						lines[1] != "See '"+inv.prog+" "+c.name+" --help'." || lines[2] != "" || stdout != "" {
						t.Errorf("%s %s %q: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout and on stderr:\n%s…\nSee '%s %s --help'.",
							inv.prog, c.name, tc.args, code, stdout, stderr, tc.want, inv.prog, c.name)
					}
				}
			})
		}
	}
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

// --help is not an error: it prints the help on stdout, as kubectl does,
// and exits 0; help CMD prints the same.
func TestHelp(t *testing.T) {
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			stdout, stderr, code := invoke("kube-annotator", args...)
			if code != 0 || !strings.Contains(stdout, "Usage:\n  kube-annotator "+c.name+" [flags]") || stderr != "" {
				t.Errorf("%q: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0 and the command's help on stdout", args, code, stdout, stderr)
			}
		}
	}
}

// Every command but version takes klog's -v, which the Troubleshooting
// docs tell users to raise.
func TestVerbosityFlag(t *testing.T) {
	for _, c := range commands() {
		help, _, _ := invoke("kube-annotator", c.name, "--help")
		if got := strings.Contains(help, "-v, --v Level"); got != (c.name != "version") {
			t.Errorf("%s --help lists -v: %v, want %v", c.name, got, c.name != "version")
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
		{[]string{"help", "nope"}, 2, "", `kube-annotator: unknown command "nope"`},
		{[]string{"nope"}, 2, "", `kube-annotator: unknown command "nope"`},
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
