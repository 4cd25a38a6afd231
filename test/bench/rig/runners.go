package rig

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

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/raw"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// Runner is one way of annotating every object: a program the benchmark
// starts as a child process.
type Runner struct {
	// name is the runner's name in tables and file names.
	Name string
	// controller is true for runners that keep running, watching, once
	// every object is annotated; the raw runner exits instead.
	Controller bool
	Bin        string
	Args       []string
	// env is added to the runner's environment.
	Env []string
}

// The runners' names, in the order in which each round runs them.
const (
	RawRunner         = "raw"
	RawMetadataRunner = "raw-metadata"
	CRRunner          = "controller-runtime"
	KARunner          = "kube-annotator"
)

// RawMetadataWatchRunner is the raw loop through the metadata client that
// also watches the four resources' metadata from before its list until it
// has received the event of each of its writes, as any controller
// receives the echo of its own writes: what it costs the API server above
// the raw loop is what that echo costs, apart from a controller's initial
// list.
const RawMetadataWatchRunner = "raw-metadata-watch"

// RunnerNames are the names of runners, in their order.
func RunnerNames(runners []*Runner) []string {
	names := make([]string, len(runners))
	for i, r := range runners {
		names[i] = r.Name
	}
	return names
}

// Start starts the runner with env added to its environment, its output
// going to a log file named after it and tag in the benchmark's directory;
// extra arguments come last.
func (b *Bench) Start(r *Runner, tag string, env []string, extra ...string) (*child.Process, error) {
	log := filepath.Join(b.Dir, r.Name+"-"+tag+".log")
	return child.Start(r.Name, log, append(slices.Clone(r.Env), env...), r.Bin, append(append([]string{}, r.Args...), extra...)...)
}

// NewRunners returns the four runners and the variants, in the order in
// which each round runs them, all connecting as the control plane's
// admin. bins are the built raw and controller-runtime runners. A name in
// Options.Runners that no runner has is an *UnknownRunnerError.
func (b *Bench) NewRunners(bins BuiltRunners) ([]*Runner, error) {
	binary, err := filepath.Abs(b.Opts.Binary)
	if err != nil {
		return nil, err
	}
	if dynamicallyLinked(binary) {
		progress.Logf("WARNING: %s is dynamically linked (built with cgo), which adds some 30 MiB to its RSS; `make build` builds it as the other runners are built", b.Opts.Binary)
	}
	if b.Rules, err = b.writeRules(); err != nil {
		return nil, err
	}
	workers := strconv.Itoa(b.Opts.Workers)
	crArgs := []string{"--kubeconfig", b.Env.Kubeconfig, "--workers", workers}
	if b.Opts.CRCacheReads {
		crArgs = append(crArgs, "--cache-reads")
	}
	runners := []*Runner{
		{Name: RawRunner, Bin: bins.raw, Args: []string{raw.Command, "--kubeconfig", b.Env.Kubeconfig, "--workers", workers}},
		{Name: RawMetadataRunner, Bin: bins.raw, Args: []string{raw.Command, "--metadata", "--kubeconfig", b.Env.Kubeconfig, "--workers", workers}},
		{Name: RawMetadataWatchRunner, Bin: bins.raw, Args: []string{raw.Command, "--metadata", "--watch", "--kubeconfig", b.Env.Kubeconfig, "--workers", workers}},
		{Name: CRRunner, Controller: true, Bin: bins.cr, Args: crArgs},
		{Name: KARunner, Controller: true, Bin: binary, Args: []string{
			"run", "--rules", b.Rules, "--kubeconfig", b.Env.Kubeconfig, "--workers", workers,
			// Every steady-state window then holds a resync of every object.
			"--resync-period", b.Opts.Steady.String(),
		}},
	}
	variants, err := b.variantRunners(runners[len(runners)-1])
	if err != nil {
		return nil, err
	}
	runners = append(runners, variants...)
	for _, name := range b.Opts.Runners {
		if !slices.ContainsFunc(runners, func(r *Runner) bool { return r.Name == name }) {
			return nil, &UnknownRunnerError{Name: name, Known: RunnerNames(runners)}
		}
	}
	return runners, nil
}

// UnknownRunnerError is a runner asked for that does not exist.
type UnknownRunnerError struct {
	Name  string
	Known []string
}

// Error says which runners there are.
func (e *UnknownRunnerError) Error() string {
	return fmt.Sprintf("no runner %q; there are %s", e.Name, strings.Join(e.Known, ", "))
}

// variantRunners returns a runner for each --variant, as ka but with the
// variant's binary, environment and flags.
func (b *Bench) variantRunners(ka *Runner) ([]*Runner, error) {
	var out []*Runner
	for _, v := range b.Opts.Variants {
		r := *ka
		r.Name = v.Name
		if v.Binary != "" {
			bin, err := filepath.Abs(v.Binary)
			if err != nil {
				return nil, err
			}
			r.Bin = bin
		}
		r.Env = v.Env
		r.Args = append(slices.Clone(ka.Args), v.Args...)
		out = append(out, &r)
	}
	return out, nil
}

// RulesYAML targets the benchmark's four resources, as the shipped
// rules.yaml does, in a file that changes to rules.yaml cannot break.
var RulesYAML = fmt.Sprintf(`version: v1
rules:
- name: bench
  resources: [deployments, replicasets, pods, frigates.ship.nwiizo.dev]
  annotations:
    %s: %q
`, workload.AnnotationKey, workload.AnnotationValue)

// writeRules writes RulesYAML in a directory of its own: kube-annotator
// watches the rules file's directory, which should not be the one its logs
// are written to.
func (b *Bench) writeRules() (string, error) {
	dir := filepath.Join(b.Dir, "rules")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "rules.yaml")
	return path, os.WriteFile(path, []byte(RulesYAML), 0o644)
}

// BuiltRunners are the paths of the runners the benchmark builds.
type BuiltRunners struct{ raw, cr string }

// BuildRunners builds the raw runner (this benchmark, whose raw subcommand
// it is) and the controller-runtime baseline (test/bench/crrunner, its own
// module) into dir. They are built as `make build` builds kube-annotator,
// with no cgo, which alone adds some 30 MiB to a process's RSS, so that
// the runners' peak RSS compare. withCR false skips the controller-runtime
// baseline, which --runners leaves out.
func BuildRunners(ctx context.Context, dir string, withCR bool) (BuiltRunners, error) {
	start := time.Now()
	root := h.RepoRoot()
	bins := BuiltRunners{raw: filepath.Join(dir, "raw"), cr: filepath.Join(dir, "crrunner")}
	progress.Logf("Building the raw and controller-runtime runners (a minute or two the first time)")
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
	progress.Logf("Built them in %v", progress.Since(start))
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
