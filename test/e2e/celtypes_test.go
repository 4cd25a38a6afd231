package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// CEL is type-checked against the schemas the API server publishes:
// check refuses a typo in a field of Deployments and an operand of the
// wrong type on a field of a Frigate's spec (the CRD's structural schema),
// each at the line of the expression, and accepts the rules written
// right; -o json reports the error at the same line. check --offline
// gives the same verdict, in the same words (TestOffline compares more).
func TestCELTypeChecked(t *testing.T) {
	const rule = "rules:\n- name: %s\n  resources: [%s]\n  when: %s\n  labels: {checked: \"yes\"}\n"
	for _, tc := range []struct {
		name, resource, when string
		want                 string // the error after the file's name; "" when accepted
	}{
		{name: "big", resource: "deployments", when: "object.spec.replicass > 2",
			want: `:4: rules[0].when: rule "big": CEL condition "object.spec.replicass > 2" does not type-check against the schema of deployments.v1.apps: column 12: undefined field 'replicass'`},
		{name: "big", resource: "deployments", when: "object.spec.replicas > 2 && object.spec.template.spec.containers.exists(c, c.image.startsWith('nginx'))"},
		{name: "painted", resource: "frigates.ship.nwiizo.dev", when: "object.spec.foo > 2",
			want: `:4: rules[0].when: rule "painted": CEL condition "object.spec.foo > 2" does not type-check against the schema of frigates.v1beta1.ship.nwiizo.dev: column 17: found no matching overload for '_>_' applied to '(string, int)'`},
		{name: "painted", resource: "frigates.ship.nwiizo.dev", when: "object.spec.fooo == 'red'",
			want: `:4: rules[0].when: rule "painted": CEL condition "object.spec.fooo == 'red'" does not type-check against the schema of frigates.v1beta1.ship.nwiizo.dev: column 12: undefined field 'fooo'`},
		{name: "painted", resource: "frigates.ship.nwiizo.dev", when: "object.spec.foo == 'red' && has(object.metadata.labels.fleet)"},
	} {
		t.Run(tc.when, func(t *testing.T) {
			path := writeFile(t, "rules.yaml", fmt.Sprintf(rule, tc.name, tc.resource, tc.when))
			stdout, stderr, code := runCLI(t, "check", "--rules", path, "--kubeconfig", env.Kubeconfig)
			switch {
			case tc.want == "" && code != 0:
				t.Errorf("check: exit %d, want 0\n%s%s", code, stdout, stderr)
			case tc.want != "" && (code == 0 || !strings.Contains(stderr, path+tc.want)):
				t.Errorf("check: exit %d\nstdout:\n%s\nstderr:\n%s\nwant an error with %s%s", code, stdout, stderr, path, tc.want)
			}
			if tc.want != "" {
				checkTypeErrorReported(t, path)
			}
			_, offline, offlineCode := runCLI(t, "check", "--offline", "--crd", h.CRDFile(), "--rules", path)
			// Online, check also says what the server lacks for admission
			// policies (before 1.36); offline knows no server.
			if online := withoutServerNote(stderr); offlineCode != code || offline != online {
				t.Errorf("check --offline: exit %d, stderr:\n%s\nwant what check says on the cluster, exit %d:\n%s", offlineCode, offline, code, online)
			}
		})
	}
}

// checkTypeErrorReported asserts that check -o json reports the rules
// file at path, whose condition does not type-check, as invalid, with one
// error at the condition's line.
func checkTypeErrorReported(t *testing.T, path string) {
	t.Helper()
	stdout, stderr, code := runCLI(t, "check", "-o", "json", "--rules", path, "--kubeconfig", env.Kubeconfig)
	var report struct {
		Valid    bool `json:"valid"`
		Problems []struct {
			Severity, Path, Message string
			Line                    int
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("check -o json: exit %d, stdout is not a report: %v\n%s%s", code, err, stdout, stderr)
	}
	p := report.Problems
	if code != 1 || report.Valid || len(p) != 1 || p[0].Severity != "error" || p[0].Path != "rules[0].when" || p[0].Line != 4 ||
		!strings.Contains(p[0].Message, "does not type-check") {
		t.Errorf("check -o json: exit %d, report %+v; want 1 and one error at rules[0].when, line 4, that says it does not type-check", code, report)
	}
}

// run type-checks the rules it starts with and each reload: a condition
// that names a field Deployments lack stops it at start; a reload to one
// is refused, naming it, and the previous rules stay in force.
func TestCELTypeCheckedByRun(t *testing.T) {
	ns := env.NewNamespace(t)
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "web", 3))
	const rules = "rules:\n- name: big\n  resources: [deployments]\n  namespaces: [%s]\n  when: %s\n  labels: {size: %s}\n"
	typo := writeFile(t, "typo.yaml", fmt.Sprintf(rules, ns, "object.spec.replicass > 2", "big"))
	_, stderr, code := runCLI(t, "run", "--rules", typo, "--kubeconfig", env.Kubeconfig, "--record-namespace", ns)
	if want := typo + `:5: rules[0].when: rule "big": CEL condition "object.spec.replicass > 2" does not type-check`; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("run: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}

	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(rules, ns, "object.spec.replicas > 2", "big"))
	p := startRun(t, "--rules", rulesFile)
	waitMetadata(t, 15*time.Second, h.Deployments, ns, "web", "labelled big", func(_, l map[string]string) bool { return l["size"] == "big" })

	replaceFile(t, rulesFile, fmt.Sprintf(rules, ns, "object.spec.replicass > 2", "huge"))
	p.WaitMetric(t, 15*time.Second, "kube_annotator_rules_last_reload_successful", 0)
	if out := p.Output(t); !strings.Contains(out, "rules[0].when: rule") || !strings.Contains(out, "undefined field 'replicass'") {
		t.Errorf("log does not name the expression that does not type-check:\n%s", out)
	}
	userSet(t, h.Deployments, ns, "web", `{"metadata":{"labels":{"size":"x"}}}`)
	waitMetadata(t, 15*time.Second, h.Deployments, ns, "web", "restored by the previous rules", func(_, l map[string]string) bool { return l["size"] == "big" })
}

// withoutServerNote is check's stderr without the lines that say what the
// API server does not serve for admission policies, which only a check
// on a cluster can say.
func withoutServerNote(stderr string) string {
	var kept []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.Contains(line, "MutatingAdmissionPolicy in admissionregistration.k8s.io/v1") && !strings.Contains(line, "it refuses the policies") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}
