package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// make help, read through a pipe as here, lists the targets without
// colour codes: only a terminal gets them.
func TestMakeHelpIntoAPipe(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	out, err := exec.Command("make", "--no-print-directory", "help").Output()
	if err != nil {
		t.Fatalf("make help: %v", err)
	}
	if s := string(out); strings.Contains(s, "\033[") || !strings.Contains(s, "  help ") {
		t.Errorf("make help into a pipe:\n%q\nwant the targets, without colour codes", s)
	}
}

// make install-plugin installs kubectl_complete-annotator beside the
// plugin, and make dist puts it in every archive, where the krew manifest
// says what to do with it: kubectl completes "kubectl annotator" through it.
func TestPluginCompletionShipped(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	for _, target := range []string{"install-plugin", "dist"} {
		out, err := exec.Command("make", "--no-print-directory", "-n", target, "PREFIX=/p", "PLATFORMS=linux/amd64").Output()
		if err != nil {
			t.Fatalf("make -n %s: %v", target, err)
		}
		want := "install -m 0755 deploy/krew/kubectl_complete-annotator /p/bin/kubectl_complete-annotator"
		if target == "dist" {
			want = "kubectl-annotator kubectl_complete-annotator"
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("make -n %s lacks %q:\n%s", target, want, out)
		}
	}
	script, err := os.ReadFile("deploy/krew/kubectl_complete-annotator")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat("deploy/krew/kubectl_complete-annotator"); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("deploy/krew/kubectl_complete-annotator is not executable: %v", err)
	}
	if !strings.HasPrefix(string(script), "#!/bin/sh\n") || !strings.Contains(string(script), "\nexec kubectl-annotator __complete \"$@\"\n") {
		t.Errorf("deploy/krew/kubectl_complete-annotator does not run kubectl-annotator __complete:\n%s", script)
	}
	manifest, err := os.ReadFile("deploy/krew/annotator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manifest), "caveats:") || !strings.Contains(string(manifest), "kubectl_complete-annotator") {
		t.Errorf("deploy/krew/annotator.yaml does not say how to link kubectl_complete-annotator")
	}
}
