package main

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// runner is one way of annotating every object: a program the benchmark
// starts as a child process.
type runner struct {
	// name is the runner's name in tables and file names.
	name string
	// controller is true for runners that keep running, watching, once
	// every object is annotated; the raw runner exits instead.
	controller bool
	bin        string
	args       []string
	// env is added to the runner's environment.
	env []string
}

// The runners' names, in the order in which each round runs them.
const (
	rawRunner         = "raw"
	rawMetadataRunner = "raw-metadata"
	crRunner          = "controller-runtime"
	kaRunner          = "kube-annotator"
)

// start starts the runner with env added to its environment, its output
// going to a log file named after it and tag in the benchmark's directory;
// extra arguments come last.
func (b *bench) start(r *runner, tag string, env []string, extra ...string) (*child, error) {
	log := filepath.Join(b.dir, r.name+"-"+tag+".log")
	return startChild(r.name, log, append(slices.Clone(r.env), env...), r.bin, append(append([]string{}, r.args...), extra...)...)
}

// newRunners returns the four runners, in the order in which each round
// runs them, all connecting as the control plane's admin. bins are the
// built raw and controller-runtime runners.
func (b *bench) newRunners(bins builtRunners) ([]*runner, error) {
	binary, err := filepath.Abs(b.opts.binary)
	if err != nil {
		return nil, err
	}
	if dynamicallyLinked(binary) {
		logf("WARNING: %s is dynamically linked (built with cgo), which adds some 30 MiB to its RSS; `make build` builds it as the other runners are built", b.opts.binary)
	}
	if b.rules, err = b.writeRules(); err != nil {
		return nil, err
	}
	workers := strconv.Itoa(b.opts.workers)
	crArgs := []string{"--kubeconfig", b.env.Kubeconfig, "--workers", workers}
	if b.opts.crCacheReads {
		crArgs = append(crArgs, "--cache-reads")
	}
	runners := []*runner{
		{name: rawRunner, bin: bins.raw, args: []string{rawCommand, "--kubeconfig", b.env.Kubeconfig, "--workers", workers}},
		{name: rawMetadataRunner, bin: bins.raw, args: []string{rawCommand, "--metadata", "--kubeconfig", b.env.Kubeconfig, "--workers", workers}},
		{name: rawMetadataWatchRunner, bin: bins.raw, args: []string{rawCommand, "--metadata", "--watch", "--kubeconfig", b.env.Kubeconfig, "--workers", workers}},
		{name: crRunner, controller: true, bin: bins.cr, args: crArgs},
		{name: kaRunner, controller: true, bin: binary, args: []string{
			"run", "--rules", b.rules, "--kubeconfig", b.env.Kubeconfig, "--workers", workers,
			// Every steady-state window then holds a resync of every object.
			"--resync-period", b.opts.steady.String(),
		}},
	}
	variants, err := b.variantRunners(runners[len(runners)-1])
	if err != nil {
		return nil, err
	}
	runners = append(runners, variants...)
	for _, name := range b.opts.runners {
		if !slices.ContainsFunc(runners, func(r *runner) bool { return r.name == name }) {
			return nil, fmt.Errorf("--runners: no runner %q; there are %s", name, strings.Join(runnerNames(runners), ", "))
		}
	}
	return runners, nil
}

// rulesYAML targets the benchmark's four resources, as the shipped
// rules.yaml does, in a file that changes to rules.yaml cannot break.
var rulesYAML = fmt.Sprintf(`version: v1
rules:
- name: bench
  resources: [deployments, replicasets, pods, frigates.ship.nwiizo.dev]
  annotations:
    %s: %q
`, annotationKey, annotationValue)

// writeRules writes rulesYAML in a directory of its own: kube-annotator
// watches the rules file's directory, which should not be the one its logs
// are written to.
func (b *bench) writeRules() (string, error) {
	dir := filepath.Join(b.dir, "rules")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "rules.yaml")
	return path, os.WriteFile(path, []byte(rulesYAML), 0o644)
}

// builtRunners are the paths of the runners the benchmark builds.
type builtRunners struct{ raw, cr string }

// buildRunners builds the raw runner (this benchmark, whose raw subcommand
// it is) and the controller-runtime baseline (test/bench/crrunner, its own
// module) into dir. They are built as `make build` builds kube-annotator,
// with no cgo, which alone adds some 30 MiB to a process's RSS, so that
// the runners' peak RSS compare. withCR false skips the controller-runtime
// baseline, which --runners leaves out.
func buildRunners(ctx context.Context, dir string, withCR bool) (builtRunners, error) {
	start := time.Now()
	root := h.RepoRoot()
	bins := builtRunners{raw: filepath.Join(dir, "raw"), cr: filepath.Join(dir, "crrunner")}
	logf("Building the raw and controller-runtime runners (a minute or two the first time)")
	for _, build := range []struct{ dir, pkg, out string }{
		{root, "./test/bench", bins.raw},
		{filepath.Join(root, "test", "bench", "crrunner"), ".", bins.cr},
	} {
		if build.out == bins.cr && !withCR {
			continue
		}
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", build.out, build.pkg)
		cmd.Dir = build.dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return bins, fmt.Errorf("build %s in %s: %w\n%s", build.pkg, build.dir, err, strings.TrimSpace(string(msg)))
		}
	}
	logf("Built them in %v", since(start))
	return bins, nil
}

// dynamicallyLinked reports whether bin is an ELF executable that asks for
// a dynamic loader; false when that cannot be told.
func dynamicallyLinked(bin string) bool {
	f, err := elf.Open(bin)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}
