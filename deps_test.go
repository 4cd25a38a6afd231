package main

import (
	"os/exec"
	"strings"
	"testing"
)

// A plain `go build` or `go install`, with cgo on as it is by default on a
// machine with a C compiler, is the small binary: nothing the command
// imports pulls in Go's plugin package, which links the C runtime and
// keeps the whole binary's code reachable. kustomize, through cli-runtime,
// did.
func TestNoPluginPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "plugin" || strings.HasPrefix(pkg, "k8s.io/cli-runtime/") || strings.HasPrefix(pkg, "sigs.k8s.io/controller-runtime") {
			t.Errorf("the command imports %s", pkg)
		}
	}
}

// The command line parses flags and prints; the process it runs is wired
// by pkg/app. pkg/cli imports none of the packages that make up the
// running controller.
func TestCommandLineDoesNotWireTheProcess(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./pkg/cli").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/kube-annotator/kube-annotator/pkg/"
	for _, pkg := range strings.Fields(string(out)) {
		switch strings.TrimPrefix(pkg, mod) {
		case "controller", "reloader", "shard", "policysync":
			t.Errorf("pkg/cli imports %s; pkg/app wires it", pkg)
		}
	}
}

// Packages below the command line import none of the packages above
// them, directly or not: each entry names a package and those it must not
// depend on.
func TestLowerPackagesDoNotImportUpper(t *testing.T) {
	const mod = "github.com/kube-annotator/kube-annotator/pkg/"
	for _, tc := range []struct {
		pkg     string
		forbids []string
	}{
		// pkg/rbac computes the RBAC from the rules alone: rules in, RBAC
		// objects out, nothing that talks to a cluster.
		{"rbac", []string{"cli", "app", "controller", "resolve", "reloader", "staticdiscovery"}},
		{"rules", []string{"cli", "app", "controller", "rbac", "resolve"}},
		{"resolve", []string{"cli", "app", "controller", "rbac"}},
	} {
		out, err := exec.Command("go", "list", "-deps", "./pkg/"+tc.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ./pkg/%s: %v", tc.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range tc.forbids {
				if dep == mod+f || strings.HasPrefix(dep, mod+f+"/") {
					t.Errorf("pkg/%s imports %s", tc.pkg, dep)
				}
			}
		}
	}
}
