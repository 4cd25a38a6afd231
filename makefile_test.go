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
// plugin, and make release (.goreleaser.yaml) puts it in every archive,
// where the krew manifest says what to do with it: kubectl completes
// "kubectl annotator" through it.
func TestPluginCompletionShipped(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	out, err := exec.Command("make", "--no-print-directory", "-n", "install-plugin", "PREFIX=/p").Output()
	if err != nil {
		t.Fatalf("make -n install-plugin: %v", err)
	}
	if want := "install -m 0755 deploy/krew/kubectl_complete-annotator /p/bin/kubectl_complete-annotator"; !strings.Contains(string(out), want) {
		t.Errorf("make -n install-plugin lacks %q:\n%s", want, out)
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
	config, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(config), "- src: deploy/krew/kubectl_complete-annotator\n") {
		t.Errorf(".goreleaser.yaml does not put kubectl_complete-annotator in the archives")
	}
	if !strings.Contains(string(config), "caveats: |") || !strings.Contains(string(config), "/kubectl_complete-annotator\" \\\n") {
		t.Errorf(".goreleaser.yaml's krew manifest does not say how to link kubectl_complete-annotator")
	}
}
