package main

import (
	"os/exec"
	"slices"
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

// module is the import path of the repository's main module.
const module = "github.com/kube-annotator/kube-annotator"

// layers are the module's packages, by directory, lowest first. A package
// imports (outside its tests) only packages of its own layer or of a lower
// one; each package's doc.go names its layer. A new package is placed here:
// the test fails on a package no layer names.
var layers = []layer{
	// Leaves: each answers one question and imports no other package of
	// the module.
	{"base", []string{"pkg/patch", "pkg/version", "pkg/metrics", "pkg/server", "pkg/kubeflags",
		"pkg/staticdiscovery", "pkg/shard", "pkg/controller/retry", "pkg/sensitive", "pkg/rules/source", "pkg/rules/labelvalue", "pkg/rules/jsonschema", "pkg/glob", "test/testutil"}},
	// The rules file and what it wants of one object; no clients.
	{"rules", []string{"pkg/rules", "pkg/rules/projection", "pkg/rules/celexpr", "pkg/rules/rulefile", "pkg/rules/yamlfield", "pkg/rules/selection", "pkg/rules/verdict", "pkg/rules/spec", "pkg/rules/tenantfile", "pkg/rules/value", "pkg/rules/lint", "pkg/rules/rulestest", "pkg/fight"}},
	// One decision per object, and what it needs of the cluster.
	{"decide", []string{"pkg/reconcile", "pkg/admission", "pkg/record", "pkg/resolve", "pkg/scan", "pkg/rbac", "pkg/reports", "pkg/tenants", "pkg/keylock"}},
	// What a command does besides its flags and output, one question
	// each: explain one object, check a file, diff, converge once,
	// complete a name, count coverage.
	{"verb", []string{"pkg/explain", "pkg/check", "pkg/diff", "pkg/converge", "pkg/completion", "pkg/coverage"}},
	// The parts of the running controller.
	{"run", []string{"pkg/controller", "pkg/controller/objcache", "pkg/controller/internal/fixture",
		"pkg/controller/rulestats", "pkg/controller/informer", "pkg/controller/expect", "pkg/controller/backlog", "pkg/controller/pace", "pkg/controller/preview", "pkg/policysync", "pkg/reloader", "pkg/tenantwatch"}},
	// The process of `run`, wired from one Config.
	{"process", []string{"pkg/app"}},
	// Flags, subcommands, main.
	{"command", []string{"pkg/cli/help", "pkg/cli/logs", "pkg/cli", "."}},
	// What tests need besides a control plane, one question each: the
	// processes they start, a process's metrics, the faults they cause,
	// what the kubelet gives a Pod. Nothing of the product.
	{"test support", []string{"test/harness/promtext", "test/harness/proc", "test/harness/faults", "test/harness/kubelet"}},
	// The control plane every suite, the benchmark and the demo start.
	{"harness", []string{"test/harness"}},
	// The benchmark's parts, one question each: where it is, its tables'
	// figures, the objects it annotates, the processes it measures, its own
	// watch, the raw runner.
	{"bench parts", []string{"test/bench/progress", "test/bench/table", "test/bench/workload",
		"test/bench/child", "test/bench/tracker", "test/bench/raw"}},
	// What every measurement of the benchmark stands on.
	{"bench rig", []string{"test/bench/rig"}},
	// The benchmark's measurements, one each.
	{"bench phases", []string{"test/bench/rounds", "test/bench/memory", "test/bench/policy", "test/bench/sharding", "test/bench/owners"}},
	// End-to-end suites, benchmark and demo.
	{"test", []string{"test/bench", "test/demo", "test/e2e", "test/soak"}},
}

// wiredByApp are the parts of the running controller. The command line
// parses flags and prints; the process it runs is wired by pkg/app, so no
// package but pkg/app (and the tests' packages under test/) imports them.
var wiredByApp = []string{"pkg/controller", "pkg/reloader", "pkg/shard", "pkg/policysync", "pkg/tenantwatch"}

// noClients import no client or informer: of client-go, only its util
// packages. What the rules want is computed without a cluster.
var noClients = []string{"pkg/patch", "pkg/rules", "pkg/rules/projection", "pkg/rules/source", "pkg/rules/labelvalue", "pkg/rules/jsonschema", "pkg/rules/celexpr", "pkg/rules/rulefile", "pkg/rules/yamlfield", "pkg/rules/selection", "pkg/rules/verdict", "pkg/rules/spec", "pkg/rules/tenantfile", "pkg/rules/value", "pkg/rules/lint", "pkg/fight"}

// layer is a named set of packages, by directory.
type layer struct {
	name string
	pkgs []string
}

// layerOf returns the index in layers of the package in directory dir, or
// -1.
func layerOf(dir string) int {
	return slices.IndexFunc(layers, func(l layer) bool { return slices.Contains(l.pkgs, dir) })
}

// imports lists the module's packages, by directory, with their non-test
// imports (those of the module by directory, the others by import path).
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dir := func(pkg string) string {
		if pkg == module {
			return "."
		}
		if d, ok := strings.CutPrefix(pkg, module+"/"); ok {
			return d
		}
		return pkg
	}
	pkgs := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		var imps []string
		for _, imp := range f[1:] {
			imps = append(imps, dir(imp))
		}
		pkgs[dir(f[0])] = imps
	}
	return pkgs
}

// Dependencies point one way: down the layers. A package of the module
// imports no package of a higher layer, only pkg/app wires the running
// controller's parts, and the rules and the patch plan import no client.
func TestLayers(t *testing.T) {
	pkgs := imports(t)
	for pkg, imps := range pkgs {
		l := layerOf(pkg)
		if l < 0 {
			t.Errorf("%s is in no layer: place it in deps_test.go's layers", pkg)
			continue
		}
		for _, imp := range imps {
			if il := layerOf(imp); il > l {
				t.Errorf("%s (layer %s) imports %s (layer %s): a lower package imports an upper one", pkg, layers[l].name, imp, layers[il].name)
			}
			if slices.Contains(wiredByApp, imp) && pkg != "pkg/app" && !strings.HasPrefix(pkg, "test/") {
				t.Errorf("%s imports %s; pkg/app wires it", pkg, imp)
			}
			if slices.Contains(noClients, pkg) && strings.HasPrefix(imp, "k8s.io/client-go/") && !strings.HasPrefix(imp, "k8s.io/client-go/util/") {
				t.Errorf("%s imports %s: it computes without a client", pkg, imp)
			}
		}
	}
	for _, l := range layers {
		for _, pkg := range l.pkgs {
			if _, ok := pkgs[pkg]; !ok {
				t.Errorf("layer %s names %s, which is no package of the module", l.name, pkg)
			}
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
		// What a command does, apart from its flags: nothing of the command
		// line, nor of the running controller.
		{"explain", []string{"cli", "app", "controller", "reloader"}},
		{"check", []string{"cli", "app", "controller", "reloader"}},
		{"diff", []string{"cli", "app", "controller", "reloader"}},
		{"converge", []string{"cli", "app", "controller", "reloader"}},
		{"completion", []string{"cli", "app", "controller", "reloader"}},
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
