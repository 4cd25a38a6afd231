package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A usageCase is a bad invocation of a command and the error line it prints.
type usageCase struct {
	name string
	args []string
	want string
}

// A commandCase is what the table test knows of one command.
type commandCase struct {
	name string
	// args are a valid invocation's arguments, without --rules and the
	// connection flags.
	args []string
	// numeric is a flag that takes a number, "" when it has none.
	numeric string
	// usage are bad invocations of its own, besides an unknown flag.
	usage []usageCase
	// cluster says that it talks to a cluster; unreachableCode is its exit
	// code when it cannot, and hint a second line it prints then.
	cluster         bool
	unreachableCode int
	hint            string
}

// commandCases are every command the root lists, and how each is used.
var commandCases = []commandCase{
	{name: "run", numeric: "--workers", cluster: true, unreachableCode: 1, usage: []usageCase{
		{"argument", []string{"extra"}, `error: unexpected argument "extra"`},
		{"--workers", []string{"--workers", "0"}, "error: --workers must be at least 1, got 0"},
		{"-A with -n", []string{"-A", "-n", "a"}, "error: -A/--all-namespaces and -n/--namespace cannot be used together"},
	}},
	{name: "once", numeric: "--workers", cluster: true, unreachableCode: 1, usage: []usageCase{
		{"arguments", []string{"a", "b"}, `error: unexpected argument "a"`},
		{"--workers", []string{"--workers", "-1"}, "error: --workers must be at least 1, got -1"},
		{"-n", []string{"-n", "Bad_NS"}, `error: --namespace "Bad_NS": a lowercase RFC 1123 label must consist of`},
	}},
	{name: "diff", numeric: "--kube-api-qps", cluster: true, unreachableCode: 2, usage: []usageCase{
		{"argument", []string{"extra"}, `error: unexpected argument "extra"`},
		{"-o", []string{"-o", "JSON"}, `error: --output must be json or yaml, got "JSON"`},
		{"-n", []string{"-n", "a.b"}, `error: --namespace "a.b": must not contain dots`},
	}},
	{name: "explain", args: []string{"configmaps/a"}, numeric: "--kube-api-qps", cluster: true, unreachableCode: 1, usage: []usageCase{
		{"no argument", nil, "error: want one object, RESOURCE/NAME or RESOURCE NAME; got 0 arguments"},
		{"three arguments", []string{"pods", "a", "b"}, "error: want one object, RESOURCE/NAME or RESOURCE NAME; got 3 arguments"},
		{"no name", []string{"pods/"}, `error: "pods/": name one object as RESOURCE/NAME or RESOURCE NAME`},
		{"-o", []string{"pods/a", "-o", "wide"}, `error: --output must be json or yaml, got "wide"`},
		{"-n with -A", []string{"pods/a", "-n", "a", "--all-namespaces"}, "error: -A/--all-namespaces and -n/--namespace cannot be used together"},
	}},
	{name: "coverage", numeric: "--kube-api-qps", cluster: true, unreachableCode: 1, usage: []usageCase{
		{"argument", []string{"extra"}, `error: unexpected argument "extra"`},
		{"--state", []string{"--state", "done"}, `error: --state "done": must be one of compliant, pending,`},
		{"-o", []string{"-o", "wide"}, `error: --output must be json or yaml, got "wide"`},
	}},
	{name: "check", numeric: "--kube-api-qps", cluster: true, unreachableCode: 2, hint: offlineHint, usage: []usageCase{
		{"argument", []string{"extra"}, `error: unexpected argument "extra"`},
		{"-o", []string{"-o", "table"}, `error: --output must be json or yaml, got "table"`},
	}},
	{name: "rbac", numeric: "--kube-api-burst", cluster: true, unreachableCode: 1, usage: []usageCase{
		{"argument", []string{"extra"}, `error: unexpected argument "extra"`},
		{"--name", []string{"--name", "Bad Name"}, `error: --name "Bad Name": a lowercase RFC 1123 subdomain must consist of`},
	}},
	{name: "admission", numeric: "--kube-api-qps", cluster: true, unreachableCode: 1, usage: []usageCase{
		{"argument", []string{"extra"}, `error: unexpected argument "extra"`},
		{"--context", []string{"--context", "nope"}, `error: --context "nope": the kubeconfig has no such context; it has a`},
	}},
	{name: "completion", args: []string{"bash"}, usage: []usageCase{
		{"no shell", nil, "error: name a shell: bash, zsh, fish or powershell"},
		{"unknown shell", []string{"tcsh"}, `error: unknown shell "tcsh": bash, zsh, fish or powershell`},
	}},
	{name: "version", usage: []usageCase{
		{"argument", []string{"extra"}, `error: unexpected argument "extra"`},
		{"-o", []string{"-o", "wide"}, `error: --output must be json or yaml, got "wide"`},
	}},
}

// The table lists every command the root lists, once.
func TestCommandCasesCoverEveryCommand(t *testing.T) {
	var listed, tested []string
	for _, c := range commands() {
		listed = append(listed, c.Name())
	}
	for _, c := range commandCases {
		tested = append(tested, c.name)
	}
	slices.Sort(listed)
	slices.Sort(tested)
	if !slices.Equal(listed, tested) {
		t.Errorf("commands %v, table %v", listed, tested)
	}
}

// testKubeconfig writes a kubeconfig with one context, a, whose server is
// server, and points KUBECONFIG at it.
func testKubeconfig(t *testing.T, server string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	config := "apiVersion: v1\nkind: Config\ncurrent-context: a\n" +
		"clusters: [{name: a, cluster: {server: \"" + server + "\"}}]\n" +
		"users: [{name: a, user: {token: t}}]\n" +
		"contexts: [{name: a, context: {cluster: a, user: a}}]\n"
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
}

// testRules writes a rules file that names a resource every cluster
// serves and one it may not, and returns its path.
func testRules(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.yaml")
	content := "rules:\n- name: team\n  resources: [configmaps, frigates.ship.nwiizo.dev]\n  annotations: {team: a}\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every command, as kube-annotator and as kubectl annotator: --help prints
// its help on stdout and exits 0; a bad invocation prints the error and
// where the help is on stderr, and exits 2, before anything talks to a
// cluster; a cluster that cannot be reached — refused, or silent — is said
// in one line (two for check), naming the server and the likely cause,
// within the request timeout, with nothing of client-go's.
func TestEveryCommand(t *testing.T) {
	testKubeconfig(t, closedPort(t))
	rulesFile := testRules(t)
	servers := []struct{ name, server, cause string }{
		{"refused", closedPort(t), "connection refused: is the cluster running"},
		{"silent", silentServer(t), "no answer within 1s (--request-timeout)"},
	}
	progs := []struct{ arg0, prog string }{
		{"/usr/local/bin/kube-annotator", "kube-annotator"},
		{"/usr/local/bin/kubectl-annotator", "kubectl annotator"},
	}
	for _, c := range commandCases {
		t.Run(c.name+"/help", func(t *testing.T) {
			for _, p := range progs {
				for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
					stdout, stderr, code := invoke(p.arg0, args...)
					if code != 0 || !strings.Contains(stdout, "\nUsage:\n  "+p.prog+" "+c.name) || stderr != "" {
						t.Errorf("%s %q: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0 and the command's help on stdout", p.prog, args, code, stdout, stderr)
					}
				}
			}
		})
		usage := append(c.usage,
			usageCase{"unknown flag", []string{"--rule", "rules.yaml"}, "error: unknown flag: --rule"},
			usageCase{"unknown shorthand", []string{"-q"}, "error: unknown shorthand flag: 'q' in -q"})
		if c.numeric != "" {
			usage = append(usage, usageCase{"invalid number", []string{c.numeric, "abc"}, `error: invalid argument "abc" for "` + c.numeric + `" flag: `})
		}
		for _, u := range usage {
			t.Run(c.name+"/usage/"+u.name, func(t *testing.T) {
				for _, p := range progs {
					args := append([]string{c.name}, u.args...)
					if c.cluster {
						args = append(args, "--rules", rulesFile)
					}
					stdout, stderr, code := invoke(p.arg0, args...)
					lines := strings.Split(stderr, "\n")
					if code != 2 || stdout != "" || len(lines) != 3 || !strings.HasPrefix(lines[0], u.want) ||
						lines[1] != "See '"+p.prog+" "+c.name+" --help'." {
						t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout and on stderr:\n%s…\nSee '%s %s --help'.",
							p.prog, args, code, stdout, stderr, u.want, p.prog, c.name)
					}
				}
			})
		}
		if !c.cluster {
			continue
		}
		for _, s := range servers {
			t.Run(c.name+"/unreachable/"+s.name, func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				args := append(append([]string{c.name}, c.args...), "--rules", rulesFile, "--server", s.server, "--request-timeout", "1s")
				stdout, stderr, code := invoke("kube-annotator", args...)
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("took %v, want it said within the request timeout", took)
				}
				want := []string{"error: API server " + s.server + ": " + s.cause}
				if c.hint != "" {
					want = append(want, c.hint)
				}
				lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
				if code != c.unreachableCode || stdout != "" || len(lines) != len(want) || !strings.HasPrefix(lines[0], want[0]) ||
					len(want) == 2 && lines[1] != want[1] {
					t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant exit %d, no stdout, and on stderr: %q…",
						args, code, stdout, stderr, c.unreachableCode, want)
				}
			})
		}
	}
}
