package owners

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/raw"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// defaultTeam is the rules' default, which bare Pods get.
const defaultTeam = "none"

// The two rules files: team read from the Pod's owners; and a literal
// annotation, which reads no owner and caches the Pods' metadata as the
// first does. (A value read from the Pod itself, with jsonPath, would
// cache whole Pods.)
var (
	fromOwnerRules = "version: v1\nrules:\n- name: team\n  resources: [pods]\n  labels:\n    team: {fromOwner: {label: team}, default: " + defaultTeam + "}\n"
	noOwnerRules   = "version: v1\nrules:\n- name: literal\n  resources: [pods]\n  annotations:\n    " + noOwnerManager + ": \"true\"\n"
)

// noOwnerManager is the field manager of the controller with
// noOwnerRules, so that it does not prune the team labels the other set,
// and the annotation it sets.
const noOwnerManager = "bench-no-owner"

// Measure runs the phase: with kube-controller-manager running, it
// creates Target with b.Opts.Owners Pods and the control group, then, in
// each of b.Opts.Rounds rounds, measures kube-annotator relabelling
// Target's Pods when Target is relabelled and the raw loop relabelling
// the same Pods; last kube-annotator's
// heap with and without reading owners, and with b.Opts.OwnersCached
// more owners.
func Measure(ctx context.Context, b *rig.Bench, runners []*rig.Runner) (*Result, error) {
	ka, rawRunner := find(runners, rig.KARunner), find(runners, rig.RawMetadataRunner)
	res := &Result{Pods: b.Opts.Owners, team: "a"}
	kcm, err := startControllerManager(b)
	if err != nil {
		return res, err
	}
	defer func() {
		// It exits with SIGTERM's status when stopped, which is no failure.
		if err := kcm.Child.Stop(child.StopTimeout); errors.Is(err, proc.ErrKilled) {
			progress.Logf("  kube-controller-manager still running %v after SIGTERM; killed it", child.StopTimeout)
		}
	}()
	if err := createNamespaces(ctx, b); err != nil {
		return res, err
	}
	w, err := watchPods(ctx, b.Metadata)
	if err != nil {
		return res, err
	}
	if err := createWorkloads(ctx, b, w, res.Pods); err != nil {
		return res, err
	}
	fromOwner, err := controller(b, ka, "from-owner", fromOwnerRules)
	if err != nil {
		return res, err
	}
	noOwner, err := controller(b, ka, "no-owner", noOwnerRules, "--field-manager", noOwnerManager)
	if err != nil {
		return res, err
	}
	for round := 1; round <= b.Opts.Rounds; round++ {
		if err := relabel(ctx, b, fromOwner, w, kcm, res, round); err != nil {
			return res, fmt.Errorf("round %d: %w", round, err)
		}
		if err := rawRelabel(ctx, b, rawRunner, w, kcm, res, round); err != nil {
			return res, fmt.Errorf("round %d: %w", round, err)
		}
	}
	return res, measureMemory(ctx, b, w, fromOwner, noOwner, res)
}

func find(runners []*rig.Runner, name string) *rig.Runner {
	for _, r := range runners {
		if r.Name == name {
			return r
		}
	}
	panic("no runner " + name)
}

// controller returns kube-annotator `run` with rules, written in a
// directory of their own, as kube-annotator watches the rules file's
// directory.
func controller(b *rig.Bench, ka *rig.Runner, name, rules string, args ...string) (*rig.Runner, error) {
	dir := filepath.Join(b.Dir, "rules-"+name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(path, []byte(rules), 0o644); err != nil {
		return nil, err
	}
	return &rig.Runner{Name: rig.KARunner + "-" + name, Controller: true, Bin: ka.Bin,
		Args: append([]string{"run", "--rules", path, "--kubeconfig", b.Env.Kubeconfig, "--workers", strconv.Itoa(b.Opts.Workers)}, args...)}, nil
}

// started is a kube-annotator process started and ready, with its
// metrics address.
type started struct {
	*child.Process
	metrics string
}

// start starts r with env, its metrics and probes on loopback, and waits
// until it is ready: its informers have synced.
func start(ctx context.Context, b *rig.Bench, r *rig.Runner, tag string, env []string) (*started, error) {
	addrs, err := child.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	c, err := b.Start(r, tag, env, "--metrics-bind-address", addrs[0], "--health-probe-bind-address", addrs[1])
	if err != nil {
		return nil, err
	}
	if err := child.WaitReady(ctx, "http://"+addrs[1]+"/readyz", b.Opts.Timeout, c.Alive); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return &started{Process: c, metrics: "http://" + addrs[0] + "/metrics"}, nil
}

// podPatches reads the API server's PATCH and other write requests on
// Pods, whoever sent them.
func podPatches(ctx context.Context, b *rig.Bench) (patches, writes int, err error) {
	r, err := b.Env.APIRequests(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("read the API server's request counts: %w", err)
	}
	return r.Count("PATCH", "pods"), r.Writes("pods"), nil
}

// relabel starts kube-annotator reading team from owners, waits until
// every Pod carries its owner's team, then relabels Target team=a →
// team=b and measures until its Pods carry it.
func relabel(ctx context.Context, b *rig.Bench, r *rig.Runner, w *podWatch, kcm *child.Process, res *Result, round int) error {
	progress.Logf("Round %d: starting kube-annotator reading team from the Pods' owners", round)
	p0, _, err := podPatches(ctx, b)
	if err != nil {
		return err
	}
	c, err := start(ctx, b, r, fmt.Sprintf("relabel-%d", round), nil)
	if err != nil {
		return err
	}
	defer func() { _ = c.Stop() }()
	if _, err := w.waitFor(ctx, "converging", b.Opts.Timeout, converged(res.Pods, res.team, "a"), c.Alive); err != nil {
		return err
	}
	initial := Run{Name: "kube-annotator", Round: round, Took: time.Since(c.Started)}
	if err := progress.Sleep(ctx, rig.Settle); err != nil {
		return err
	}
	p1, _, err := podPatches(ctx, b)
	if err != nil {
		return err
	}
	initial.Patches = p1 - p0
	if round == 1 {
		res.Initial = initial
	}
	progress.Logf("kube-annotator labelled every Pod in %v from its start, %d PATCH on pods", initial.Took.Round(time.Millisecond), initial.Patches)

	control, err := controlVersions(ctx, b)
	if err != nil {
		return err
	}
	_, w0, err := podPatches(ctx, b)
	if err != nil {
		return err
	}
	cpu0 := c.CPU()
	others, err := othersCPU(ctx, b, kcm)
	if err != nil {
		return err
	}
	team := fmt.Sprintf("b%d", round)
	progress.Logf("Relabelling Deployment %s/%s team=%s → team=%s", Namespace, Target, res.team, team)
	relabelled := time.Now()
	body := fmt.Appendf(nil, `{"metadata":{"labels":{"team":%q}}}`, team)
	if _, err := b.Dynamic.Resource(h.Deployments).Namespace(Namespace).Patch(ctx, Target, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("relabel deployment %s: %w", Target, err)
	}
	res.team = team
	last, err := w.waitFor(ctx, "relabelling", b.Opts.Timeout, converged(res.Pods, team, "a"), c.Alive)
	if err != nil {
		return err
	}
	if err := progress.Sleep(ctx, rig.Settle); err != nil {
		return err
	}
	run := Run{Name: "kube-annotator", Round: round, Took: last.Sub(relabelled), CPU: c.CPU() - cpu0}
	if run.Others, err = others(ctx); err != nil {
		return err
	}
	if run.Patches, run.Writes, err = podPatches(ctx, b); err != nil {
		return err
	}
	run.Patches -= p1
	run.Writes -= w0
	after, err := controlVersions(ctx, b)
	if err != nil {
		return err
	}
	res.Control, res.ControlWritten = len(control), append(res.ControlWritten, changed(control, after)...)
	res.Relabel = append(res.Relabel, run)
	progress.Logf("kube-annotator relabelled %d Pods in %v: %d PATCH on pods, %d of the %d control Pods written in all, %.2f CPU s",
		res.Pods, run.Took.Round(time.Millisecond), run.Patches, len(res.ControlWritten), res.Control, run.CPU)
	return c.Stop()
}

// rawRelabel runs the raw loop that sets team=c on Target's Pods, with
// no controller running, and measures it from its start until the watch
// saw the last Pod relabelled.
func rawRelabel(ctx context.Context, b *rig.Bench, rawRunner *rig.Runner, w *podWatch, kcm *child.Process, res *Result, round int) error {
	team := fmt.Sprintf("c%d", round)
	progress.Logf("Round %d: running the raw PATCH loop, team=%s → team=%s on the same Pods", round, res.team, team)
	r := &rig.Runner{Name: "raw-relabel", Bin: rawRunner.Bin, Args: []string{raw.Command, "--label", "team=" + team,
		"--namespace", Namespace, "--selector", "app=" + Target, "--kubeconfig", b.Env.Kubeconfig, "--workers", strconv.Itoa(b.Opts.Workers)}}
	p0, w0, err := podPatches(ctx, b)
	if err != nil {
		return err
	}
	others, err := othersCPU(ctx, b, kcm)
	if err != nil {
		return err
	}
	c, err := b.Start(r, strconv.Itoa(round), nil)
	if err != nil {
		return err
	}
	if err := c.Wait(b.Opts.Timeout); err != nil {
		return err
	}
	last, err := w.waitFor(ctx, "raw relabelling", time.Minute, converged(res.Pods, team, "a"), nil)
	if err != nil {
		return err
	}
	took := last.Sub(c.Started)
	if err := progress.Sleep(ctx, rig.Settle); err != nil {
		return err
	}
	run := Run{Name: "raw PATCH loop", Round: round, Took: took, CPU: c.CPU()}
	if run.Others, err = others(ctx); err != nil {
		return err
	}
	if run.Patches, run.Writes, err = podPatches(ctx, b); err != nil {
		return err
	}
	run.Patches -= p0
	run.Writes -= w0
	res.Raw = append(res.Raw, run)
	progress.Logf("The raw loop relabelled %d Pods in %v: %d PATCH on pods, %.2f CPU s", res.Pods, took.Round(time.Millisecond), run.Patches, run.CPU)
	return nil
}

// othersCPU reads the CPU seconds kube-apiserver, etcd and
// kube-controller-manager have used, and returns a function that returns
// what they used since.
func othersCPU(ctx context.Context, b *rig.Bench, kcm *child.Process) (func(context.Context) (OthersCPU, error), error) {
	cp0, err := b.ControlPlaneCPU(ctx)
	if err != nil {
		return nil, err
	}
	kcm0 := kcm.CPU()
	return func(ctx context.Context) (OthersCPU, error) {
		cp, err := b.ControlPlaneCPU(ctx)
		if err != nil {
			return OthersCPU{}, err
		}
		return OthersCPU{ControlPlane: cp.Sub(cp0), ControllerManager: kcm.CPU() - kcm0}, nil
	}, nil
}
