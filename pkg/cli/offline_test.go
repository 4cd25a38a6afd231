package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// frigateCRD is the repository's Kubebuilder CRD.
var frigateCRD = filepath.Join("..", "..", "deploy", "crd", "ship.nwiizo.dev_frigates.yaml")

// writeTemp writes content to a file named name in a new directory.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// check --offline compiles the rules against the resources known offline:
// what only resolved names show fails it, as it fails check and run on a
// cluster; names it does not know are warnings.
func TestCheckOffline(t *testing.T) {
	tests := []struct {
		name       string
		rules      string
		crds       []string
		wantCode   int
		wantStdout string   // "valid" for the file's line
		wantStderr []string // substrings
		noStderr   string   // a substring stderr must not have
	}{
		{name: "one key, two values, on every pod",
			rules:    "rules:\n- {name: team-a, resources: [pods], annotations: {team: a}}\n- {name: team-b, resources: [pods], annotations: {team: b}}\n",
			wantCode: 1,
			wantStderr: []string{`error: `, `rules[1].annotations.team: conflicts with rules[0] (team-a), which also applies to every object of pods.v1: ` +
				`annotation "team" is "b" here (team-b) and "a" there`}},
		{name: "one resource named two ways",
			rules:      "rules:\n- {name: web, resources: [deploy], annotations: {team: web}}\n- {name: db, resources: [deployments.v1.apps], annotations: {team: db}}\n",
			wantCode:   1,
			wantStderr: []string{"rules[1].annotations.team: conflicts with rules[0] (web)", "(db)"}},
		{name: "a cycle through two names",
			rules: "rules:\n- {name: a, resources: [deploy], selector: '!x', labels: {y: '1'}}\n" +
				"- {name: b, resources: [deployments.v1.apps], selector: '!y', labels: {x: '1'}}\n",
			wantCode:   1,
			wantStderr: []string{`rules[0].selector: tests label "x", set by rules[1] (b)`}},
		{name: "a custom resource without its CRD",
			rules:      "rules:\n- {name: f, resources: [frigates.ship.nwiizo.dev], annotations: {a: '1'}}\n",
			wantStdout: "valid (1 rule)",
			wantStderr: []string{`warning: `, `rules[0].resources[0]: resource "frigates.ship.nwiizo.dev" is not built into Kubernetes `, "--crd"}},
		{name: "a custom resource with its CRD",
			rules: "rules:\n- {name: f, resources: [frigates.ship.nwiizo.dev], annotations: {a: '1'}}\n- {name: g, resources: [frigate], annotations: {a: '2'}}\n",
			crds:  []string{frigateCRD}, wantCode: 1,
			wantStderr: []string{"rules[1].annotations.a: conflicts with rules[0] (f)", "frigates.v1beta1.ship.nwiizo.dev"}},
		{name: "a claim's label read by a volume",
			rules:      "rules:\n- name: v\n  resources: [persistentvolumes]\n  labels:\n    team: {fromRef: {resource: pvc, field: spec.claimRef, label: team}}\n",
			wantStdout: "valid (1 rule)"},
		{name: "a Secret, and a ConfigMap by a field without names",
			rules: "rules:\n- name: p\n  resources: [pods]\n  labels:\n    a: {fromRef: {resource: secrets, name: s, label: x}}\n" +
				"    b: {fromRef: {resource: configmaps, field: spec.x, data: x}}\n",
			wantCode: 1,
			wantStderr: []string{`:5: rules[0].labels.a.fromRef.resource: fromRef does not read "secrets": Secrets are never read`,
				`:6: rules[0].labels.b.fromRef: must give names: [NAME, …], the names of the configmaps the field may name`}},
		{name: "a typo",
			rules:      "rules:\n- {name: d, resources: [deploymnets], annotations: {a: '1'}}\n",
			wantStdout: "valid (1 rule)",
			wantStderr: []string{`(did you mean "deployments"?)`}},
		{name: "a sensitive resource resolved",
			rules:      "rules:\n- {name: s, resources: [secret], annotations: {a: '1'}}\n",
			wantStdout: "valid (1 rule)",
			wantStderr: []string{`rule "s" targets`}},
		{name: "agreeing rules",
			rules:      "rules:\n- {name: a, resources: [pods], annotations: {team: a}}\n- {name: b, resources: [po], annotations: {team: a}}\n",
			crds:       []string{frigateCRD},
			wantStdout: "valid (2 rules)", noStderr: "warning"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "rules.yaml", tc.rules)
			args := []string{"check", "--offline", "--rules", path}
			for _, c := range tc.crds {
				args = append(args, "--crd", c)
			}
			stdout, stderr, code := invoke("kube-annotator", args...)
			wantStdout := ""
			if tc.wantStdout != "" {
				wantStdout = path + ": " + tc.wantStdout + "\n"
			}
			if code != tc.wantCode || stdout != wantStdout {
				t.Errorf("exit %d, stdout %q; want exit %d, stdout %q\nstderr: %s", code, stdout, tc.wantCode, wantStdout, stderr)
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tc.noStderr != "" && strings.Contains(stderr, tc.noStderr) {
				t.Errorf("stderr has %q:\n%s", tc.noStderr, stderr)
			}
		})
	}
}

// --crd is for --offline; a file that is no CRD file fails the command,
// naming the flag and the file.
func TestOfflineCRDFlag(t *testing.T) {
	rulesPath := writeTemp(t, "rules.yaml", "rules:\n- {name: a, resources: [pods], annotations: {team: a}}\n")
	notCRD := writeTemp(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	for _, command := range []string{"check", "rbac", "admission"} {
		t.Run(command, func(t *testing.T) {
			_, stderr, code := invoke("kube-annotator", command, "--rules", rulesPath, "--crd", frigateCRD)
			if want := "error: --crd needs --offline"; code != 2 || !strings.HasPrefix(stderr, want) {
				t.Errorf("--crd without --offline: exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
			}
			_, stderr, code = invoke("kube-annotator", command, "--offline", "--rules", rulesPath, "--crd", notCRD)
			if want := "error: --crd: " + notCRD + ": no CustomResourceDefinition"; code != 1 || !strings.HasPrefix(stderr, want) {
				t.Errorf("--crd of no CRD: exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
			}
		})
	}
}

// rbac and admission work offline: the CRD given as a file resolves; a
// grouped name known nowhere is granted as written, with a warning.
func TestRBACAndAdmissionOffline(t *testing.T) {
	rulesPath := writeTemp(t, "rules.yaml", "rules:\n- {name: f, resources: [frigate, deploy, widgets.example.com], annotations: {a: '1'}}\n")
	stdout, stderr, code := invoke("kube-annotator", "rbac", "--offline", "--rules", rulesPath, "--crd", frigateCRD)
	if code != 0 {
		t.Fatalf("rbac --offline: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"- ship.nwiizo.dev\n  resources:\n  - frigates\n", "- apps\n  resources:\n  - deployments\n", "- example.com\n  resources:\n  - widgets\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("rbac --offline lacks %q:\n%s", want, stdout)
		}
	}
	if want := "widgets.example.com is not known offline (built in, or defined by a --crd file); granting resource \"widgets\" in group \"example.com\" as written"; !strings.Contains(stderr, want) {
		t.Errorf("rbac --offline stderr lacks %q:\n%s", want, stderr)
	}

	stdout, stderr, code = invoke("kube-annotator", "admission", "--offline", "--rules", rulesPath, "--crd", frigateCRD)
	if code != 0 {
		t.Fatalf("admission --offline: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kind: MutatingAdmissionPolicy\n", "- ship.nwiizo.dev\n", "- v1beta1\n", "- frigates\n", "- deployments\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("admission --offline lacks %q:\n%s", want, stdout)
		}
	}
	if want := `resource "widgets.example.com" is not built into Kubernetes`; !strings.Contains(stderr, want) || !strings.Contains(stderr, "no policy applies it") {
		t.Errorf("admission --offline stderr lacks %q and no policy applies it:\n%s", want, stderr)
	}
}
