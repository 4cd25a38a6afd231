package main

import (
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
