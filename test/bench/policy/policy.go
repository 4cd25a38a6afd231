package policy

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// Run is what one pass of the admission phase measured: objects
// created one at a time while kube-annotator ran, with or without its
// admission policy.
type Run struct {
	policy bool
	// objects is how many other objects kube-annotator had cached.
	objects int
	// created is what creating each object measured, in order.
	created []rig.CreatedObject
	// patches are the PATCH requests the API server served on the four
	// resources while the objects were created.
	patches int
}

// The policy and binding run --admission-policies keeps for rig.RulesYAML's
// rule "bench", under kube-annotator's default field manager.
var (
	admissionPolicies = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies"}
	admissionBindings = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings"}
	admissionPolicy   = "kube-annotator.bench"
)

// Measure measures, twice, n objects (the four resources in turn)
// created one at a time while a fresh kube-annotator runs: first as
// usual, then with --admission-policies once its policy takes effect. It
// runs last: the policy, deleted at the end, would otherwise annotate
// what later phases reset.
func Measure(ctx context.Context, b *rig.Bench, ka *rig.Runner, n int) ([]Run, error) {
	var runs []Run
	for _, policy := range []bool{false, true} {
		run, err := measureRun(ctx, b, ka, n, policy)
		if err != nil {
			return runs, err
		}
		runs = append(runs, run)
		lat, req := run.latencies()
		progress.Logf("%s: %d of %d annotated in the create response; create→annotated p50 %v, p99 %v; %d PATCH; create request p50 %v, p99 %v",
			run.label(), run.inResponse(), len(run.created), table.Percentile(lat, 0.50), table.Percentile(lat, 0.99), run.patches,
			table.Percentile(req, 0.50), table.Percentile(req, 0.99))
	}
	return runs, nil
}

// measureRun starts kube-annotator, with --admission-policies if policy,
// waits until it has converged (and its policy takes effect), and creates
// n objects one at a time, counting the requests the API server serves
// meanwhile. It stops kube-annotator, then deletes the objects and the
// policy.
func measureRun(ctx context.Context, b *rig.Bench, ka *rig.Runner, n int, policy bool) (res Run, err error) {
	res = Run{policy: policy, objects: b.Objects}
	addrs, err := child.FreeAddrs(2)
	if err != nil {
		return res, err
	}
	args := []string{"--metrics-bind-address", addrs[0], "--health-probe-bind-address", addrs[1]}
	tag := "admission-without"
	if policy {
		args, tag = append(args, "--admission-policies"), "admission-with"
		defer func() { err = errors.Join(err, deletePolicies(ctx, b)) }()
	}
	progress.Logf("Measuring %d objects created one at a time, %s", n, res.label())
	var created []workload.ObjectRef
	defer func() { err = errors.Join(err, b.DeleteAll(ctx, created)) }()
	c, err := b.Start(ka, tag, nil, args...)
	if err != nil {
		return res, err
	}
	defer func() { _ = c.Stop() }() // before the objects and the policy are deleted
	if err := child.WaitReady(ctx, "http://"+addrs[1]+"/readyz", b.Opts.Timeout, c.Alive); err != nil {
		return res, err
	}
	if err := b.Tracker.WaitFor(ctx, "converging", b.Opts.Timeout, b.Tracker.Is(b.Objects, b.Objects), c.Alive); err != nil {
		return res, err
	}
	if policy {
		if err := waitPolicy(ctx, b, c.Alive); err != nil {
			return res, err
		}
	}
	if res.created, res.patches, err = createOneByOne(ctx, b, tag, n, &created); err != nil {
		return res, err
	}
	return res, c.Stop()
}

// createOneByOne creates n objects named after tag, the four resources in
// turn, each once the previous one was seen annotated, and returns what
// each measured and the PATCH requests the API server served on the four
// resources meanwhile.
func createOneByOne(ctx context.Context, b *rig.Bench, tag string, n int, created *[]workload.ObjectRef) ([]rig.CreatedObject, int, error) {
	w, err := b.OpenWindow(ctx)
	if err != nil {
		return nil, 0, err
	}
	var out []rig.CreatedObject
	for i := range n {
		r := workload.Resources[i%len(workload.Resources)]
		ref := workload.ObjectRef{Resource: r.GVR, Namespace: workload.LatencyNamespace, Name: fmt.Sprintf("%s-%04d", tag, i)}
		c, err := b.CreateAnnotated(ctx, ref, r.Make(ref.Namespace, ref.Name), created)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	if err := progress.Sleep(ctx, rig.Settle); err != nil {
		return nil, 0, err
	}
	counts, err := w.Close(ctx)
	if err != nil {
		return nil, 0, err
	}
	if other := counts.Writes - n - counts.Patch; other != 0 {
		progress.Logf("  WARNING: %d writes other than the creates and PATCH (server-side applies?)", other)
	}
	return out, counts.Patch, nil
}

// policyWait bounds how long the policy may take to exist and take effect.
const policyWait = time.Minute

// waitPolicy waits until kube-annotator's policy and binding exist, then
// until the API server applies them: it creates probe Pods until one's
// create response carries the annotation, waits until each is annotated
// (by the controller, for those the policy missed) and deletes them, so
// that none of the controller's writes falls in the measurement.
func waitPolicy(ctx context.Context, b *rig.Bench, alive func() error) error {
	start := time.Now()
	deadline := start.Add(policyWait)
	for _, gvr := range []schema.GroupVersionResource{admissionPolicies, admissionBindings} {
		if err := waitExists(ctx, b, gvr, admissionPolicy, deadline, alive); err != nil {
			return err
		}
	}
	var probes []workload.ObjectRef
	for i := 0; ; i++ {
		ref := workload.ObjectRef{Resource: h.Pods, Namespace: workload.LatencyNamespace, Name: fmt.Sprintf("admission-probe-%d", i)}
		c, err := b.CreateAnnotated(ctx, ref, workload.Pod(ref.Namespace, ref.Name), &probes)
		if err != nil {
			return errors.Join(err, b.DeleteAll(ctx, probes))
		}
		if c.InResponse {
			break
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("the API server did not apply policy %s within %v", admissionPolicy, policyWait), b.DeleteAll(ctx, probes))
		}
	}
	progress.Logf("Policy %s took effect %.1fs after kube-annotator was ready (%d probe Pods)", admissionPolicy, time.Since(start).Seconds(), len(probes))
	if err := b.DeleteAll(ctx, probes); err != nil {
		return err
	}
	// The API server counts a request once it has written its response,
	// which can come after the watch saw the probes' patches.
	return progress.Sleep(ctx, rig.Settle)
}

// waitExists polls every 100ms until the cluster-scoped object name of
// gvr exists, or deadline passes.
func waitExists(ctx context.Context, b *rig.Bench, gvr schema.GroupVersionResource, name string, deadline time.Time, alive func() error) error {
	for {
		_, err := b.Dynamic.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if aerr := alive(); aerr != nil {
			return aerr
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s %s: %w", gvr.Resource, name, err)
		}
		if err := progress.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// deletePolicies deletes the policies and bindings kube-annotator
// manages; call it once kube-annotator has stopped, or it puts them back.
func deletePolicies(ctx context.Context, b *rig.Bench) error {
	sel := metav1.ListOptions{LabelSelector: admission.ManagedByLabel + "=" + admission.ManagedBy}
	var errs []error
	for _, gvr := range []schema.GroupVersionResource{admissionBindings, admissionPolicies} {
		if err := b.Dynamic.Resource(gvr).DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
			errs = append(errs, fmt.Errorf("delete the %s: %w", gvr.Resource, err))
		}
	}
	return errors.Join(errs...)
}
