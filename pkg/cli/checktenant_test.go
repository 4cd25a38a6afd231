package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/check"
)

// tenantLimits is a main rules file that lets tenants label their Pods
// with myorg.net/* and team, in the namespaces labelled tenant=yes.
const tenantLimits = `tenants:
  namespaceSelector: tenant=yes
  resources: [pods, namespaces]
  keys: {labels: ["myorg.net/*", team]}
rules:
- name: managed
  resources: [pods]
  selector: '!myorg.net/unmanaged'
  labels: {managed: "true"}
`

// check --tenant --offline --tenant-file checks a tenant's file as the
// controller would: it prints the status the controller writes on the
// ConfigMap, each refusal at its line with the limit, and exits 1 when
// anything is refused or the file cannot be read; the namespace selector
// is said not to be checked.
func TestCheckTenantOffline(t *testing.T) {
	noSection := writeTemp(t, "plain.yaml", "rules:\n- {name: a, resources: [pods], labels: {team: a}}\n")
	main := writeTemp(t, "rules.yaml", tenantLimits)
	tests := []struct {
		name       string
		rules      string // the main file; main when ""
		tenant     string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{name: "all in force",
			tenant:     "rules:\n- name: team\n  resources: [pods]\n  labels: {team: a}\n",
			wantStdout: []string{"1 of 1 rules in force\n"},
			wantStderr: []string{"tenants.namespaceSelector (tenant=yes) is not checked offline"}},
		{name: "a refused key",
			tenant: "rules:\n- name: team\n  resources: [pods]\n  labels: {team: a}\n" +
				"- name: evil\n  resources: [namespaces]\n  labels: {evil.example/bypass: \"1\"}\n",
			wantCode: 1,
			wantStdout: []string{"1 of 2 rules in force; refused:\n" +
				`line 7: rules[1].labels.evil.example/bypass: label key "evil.example/bypass" matches none of tenants.keys.labels (myorg.net/*, team)` + "\n"}},
		{name: "a resource and a field only the main file may give",
			tenant:   "rules:\n- name: cm\n  resources: [configmaps]\n  namespaces: [other]\n  labels: {team: a}\n",
			wantCode: 1,
			wantStdout: []string{"0 of 1 rules in force; refused:\n", "rules[0].namespaces: only the main rules file may give it",
				`rules[0].resources[0]: "configmaps" is not one of the resources tenants.resources allows (pods, namespaces)`}},
		{name: "a malformed file",
			tenant:     "rules: [{name: team, resources: [pods]\n",
			wantCode:   1,
			wantStdout: []string{"no rule in force: configmap team-a/kube-annotator-rules:"}},
		{name: "a tenants section in the tenant's file",
			tenant:     "tenants: {resources: [pods], keys: {labels: [a]}}\nrules: []\n",
			wantCode:   1,
			wantStdout: []string{"no rule in force: configmap team-a/kube-annotator-rules: line 1: tenants: only the main rules file may let tenants write rules"}},
		{name: "a cycle with the main file's rules",
			tenant:     "rules:\n- name: team\n  resources: [pods]\n  labels: {team: a}\n- name: opt-out\n  resources: [pods]\n  selector: '!managed'\n  labels: {myorg.net/unmanaged: a}\n",
			wantCode:   1,
			wantStdout: []string{"no rule in force: configmap team-a/kube-annotator-rules (with the main rules file):", `main file's rules[0].selector: tests label "myorg.net/unmanaged", set by`, "(team-a/opt-out)"}},
		{name: "a main file without a tenants section", rules: noSection,
			tenant:     "rules: []\n",
			wantCode:   2,
			wantStderr: []string{"error: --tenant team-a: " + noSection + " has no tenants section: tenants write rules only where the main rules file lets them\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules := main
			if tc.rules != "" {
				rules = tc.rules
			}
			tenant := writeTemp(t, "tenant.yaml", tc.tenant)
			stdout, stderr, code := invoke("kube-annotator", "check", "--offline", "--rules", rules, "--tenant", "team-a", "--tenant-file", tenant)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, stdout, stderr)
			}
			for _, w := range tc.wantStdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// check --tenant -o json reports the tenant's file as check reports a
// rules file: each refusal a problem of severity error at its line, and
// the status the controller writes.
func TestCheckTenantJSON(t *testing.T) {
	main := writeTemp(t, "rules.yaml", tenantLimits)
	tenant := writeTemp(t, "tenant.yaml", "rules:\n- name: evil\n  resources: [pods]\n  labels: {evil.example/bypass: \"1\"}\n")
	stdout, stderr, code := invoke("kube-annotator", "check", "--offline", "--rules", main, "--tenant", "team-a", "--tenant-file", tenant, "-o", "json")
	var r check.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || code != 1 || stderr != "" {
		t.Fatalf("exit %d, %v; stdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	if r.File != tenant || r.Tenant != "team-a" || !r.Valid || r.Rules != 1 || r.OK || !strings.HasPrefix(r.Status, "0 of 1 rules in force; refused:\nline 4: ") {
		t.Errorf("report %+v", r)
	}
	if len(r.Problems) != 2 || r.Problems[0] != (check.Problem{Severity: "error", Path: "rules[0].labels.evil.example/bypass", Line: 4,
		Message: `label key "evil.example/bypass" matches none of tenants.keys.labels (myorg.net/*, team)`}) || r.Problems[1].Severity != "warning" {
		t.Errorf("problems %+v", r.Problems)
	}
}

// --tenant and --tenant-file are checked before anything is read, each
// error naming the flag.
func TestCheckTenantFlags(t *testing.T) {
	main := writeTemp(t, "rules.yaml", tenantLimits)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"file without namespace", []string{"--tenant-file", main}, "error: --tenant-file needs --tenant NAMESPACE"},
		{"offline without file", []string{"--offline", "--tenant", "a"}, "error: --tenant with --offline needs --tenant-file"},
		{"with -n", []string{"--tenant", "a", "-n", "b"}, "error: --tenant cannot be used with -n or -A"},
		{"with -A", []string{"--tenant", "a", "-A"}, "error: --tenant cannot be used with -n or -A"},
		{"not a namespace", []string{"--tenant", "Team_A"}, `error: --tenant "Team_A": a lowercase RFC 1123 label`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := invoke("kube-annotator", append([]string{"check", "--rules", main}, tc.args...)...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.want) || !strings.Contains(stderr, "See 'kube-annotator check --help'.") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
	stdout, stderr, code := invoke("kube-annotator", "check", "--offline", "--rules", main, "--tenant", "a", "--tenant-file", "/nonexistent.yaml")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "/nonexistent.yaml") {
		t.Errorf("an unreadable --tenant-file: exit %d, stdout %q, stderr %q; want exit 1 naming the file", code, stdout, stderr)
	}
}

// check --tenant on a cluster that cannot be asked reaches no verdict:
// exit 2, with the hint to check the file offline.
func TestCheckTenantUnreachable(t *testing.T) {
	testKubeconfig(t, closedPort(t))
	main := writeTemp(t, "rules.yaml", tenantLimits)
	stdout, stderr, code := invoke("kube-annotator", "check", "--rules", main, "--tenant", "a", "--request-timeout", "1s")
	if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "error: API server ") || !strings.HasSuffix(stderr, offlineHint+"\n") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and the offline hint", code, stdout, stderr)
	}
}
