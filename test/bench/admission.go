package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// admissionRun is what one pass of the admission phase measured: objects
// created one at a time while kube-annotator ran, with or without its
// admission policy.
type admissionRun struct {
	policy bool
	// objects is how many other objects kube-annotator had cached.
	objects int
	// created is what creating each object measured, in order.
	created []createdObject
	// patches are the PATCH requests the API server served on the four
	// resources while the objects were created.
	patches int
}

// The policy and binding run --admission-policies keeps for rulesYAML's
// rule "bench", under kube-annotator's default field manager.
var (
	admissionPolicies = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies"}
	admissionBindings = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings"}
	admissionPolicy   = "kube-annotator.bench"
)

// admission measures, twice, n objects (the four resources in turn)
// created one at a time while a fresh kube-annotator runs: first as
// usual, then with --admission-policies once its policy takes effect. It
// runs last: the policy, deleted at the end, would otherwise annotate
// what later phases reset.
func (b *bench) admission(ctx context.Context, ka *runner, n int) ([]admissionRun, error) {
	var runs []admissionRun
	for _, policy := range []bool{false, true} {
		run, err := b.admissionRun(ctx, ka, n, policy)
		if err != nil {
			return runs, err
		}
		runs = append(runs, run)
		lat, req := run.latencies()
		logf("%s: %d of %d annotated in the create response; create→annotated p50 %v, p99 %v; %d PATCH; create request p50 %v, p99 %v",
			run.label(), run.inResponse(), len(run.created), percentile(lat, 0.50), percentile(lat, 0.99), run.patches,
			percentile(req, 0.50), percentile(req, 0.99))
	}
	return runs, nil
}

// admissionRun starts kube-annotator, with --admission-policies if policy,
// waits until it has converged (and its policy takes effect), and creates
// n objects one at a time, counting the requests the API server serves
// meanwhile. It stops kube-annotator, then deletes the objects and the
// policy.
func (b *bench) admissionRun(ctx context.Context, ka *runner, n int, policy bool) (res admissionRun, err error) {
	res = admissionRun{policy: policy, objects: b.objects}
	addrs, err := freeAddrs(2)
	if err != nil {
		return res, err
	}
	args := []string{"--metrics-bind-address", addrs[0], "--health-probe-bind-address", addrs[1]}
	tag := "admission-without"
	if policy {
		args, tag = append(args, "--admission-policies"), "admission-with"
		defer func() { err = errors.Join(err, b.deletePolicies(ctx)) }()
	}
	logf("Measuring %d objects created one at a time, %s", n, res.label())
	var created []objectRef
	defer func() { err = errors.Join(err, b.deleteAll(ctx, created)) }()
	c, err := b.start(ka, tag, nil, args...)
	if err != nil {
		return res, err
	}
	defer func() { _ = c.stop() }() // before the objects and the policy are deleted
	if err := waitReady(ctx, "http://"+addrs[1]+"/readyz", b.opts.timeout, c.alive); err != nil {
		return res, err
	}
	if err := b.tracker.waitFor(ctx, "converging", b.opts.timeout, b.tracker.is(b.objects, b.objects), c.alive); err != nil {
		return res, err
	}
	if policy {
		if err := b.waitPolicy(ctx, c.alive); err != nil {
			return res, err
		}
	}
	if res.created, res.patches, err = b.createOneByOne(ctx, tag, n, &created); err != nil {
		return res, err
	}
	return res, c.stop()
}

// createOneByOne creates n objects named after tag, the four resources in
// turn, each once the previous one was seen annotated, and returns what
// each measured and the PATCH requests the API server served on the four
// resources meanwhile.
func (b *bench) createOneByOne(ctx context.Context, tag string, n int, created *[]objectRef) ([]createdObject, int, error) {
	w, err := b.openWindow(ctx)
	if err != nil {
		return nil, 0, err
	}
	var out []createdObject
	for i := range n {
		r := resources[i%len(resources)]
		ref := objectRef{resource: r.gvr, namespace: latencyNamespace, name: fmt.Sprintf("%s-%04d", tag, i)}
		c, err := b.createAnnotated(ctx, ref, r.make(ref.namespace, ref.name), created)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	if err := sleep(ctx, settle); err != nil {
		return nil, 0, err
	}
	counts, err := w.close(ctx)
	if err != nil {
		return nil, 0, err
	}
	if other := counts.writes - n - counts.patch; other != 0 {
		logf("  WARNING: %d writes other than the creates and PATCH (server-side applies?)", other)
	}
	return out, counts.patch, nil
}

// policyWait bounds how long the policy may take to exist and take effect.
const policyWait = time.Minute

// waitPolicy waits until kube-annotator's policy and binding exist, then
// until the API server applies them: it creates probe Pods until one's
// create response carries the annotation, waits until each is annotated
// (by the controller, for those the policy missed) and deletes them, so
// that none of the controller's writes falls in the measurement.
func (b *bench) waitPolicy(ctx context.Context, alive func() error) error {
	start := time.Now()
	deadline := start.Add(policyWait)
	for _, gvr := range []schema.GroupVersionResource{admissionPolicies, admissionBindings} {
		if err := b.waitExists(ctx, gvr, admissionPolicy, deadline, alive); err != nil {
			return err
		}
	}
	var probes []objectRef
	for i := 0; ; i++ {
		ref := objectRef{resource: h.Pods, namespace: latencyNamespace, name: fmt.Sprintf("admission-probe-%d", i)}
		c, err := b.createAnnotated(ctx, ref, pod(ref.namespace, ref.name), &probes)
		if err != nil {
			return errors.Join(err, b.deleteAll(ctx, probes))
		}
		if c.inResponse {
			break
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("the API server did not apply policy %s within %v", admissionPolicy, policyWait), b.deleteAll(ctx, probes))
		}
	}
	logf("Policy %s took effect %.1fs after kube-annotator was ready (%d probe Pods)", admissionPolicy, time.Since(start).Seconds(), len(probes))
	if err := b.deleteAll(ctx, probes); err != nil {
		return err
	}
	// The API server counts a request once it has written its response,
	// which can come after the watch saw the probes' patches.
	return sleep(ctx, settle)
}

// waitExists polls every 100ms until the cluster-scoped object name of
// gvr exists, or deadline passes.
func (b *bench) waitExists(ctx context.Context, gvr schema.GroupVersionResource, name string, deadline time.Time, alive func() error) error {
	for {
		_, err := b.dynamic.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if aerr := alive(); aerr != nil {
			return aerr
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s %s: %w", gvr.Resource, name, err)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// deletePolicies deletes the policies and bindings kube-annotator
// manages; call it once kube-annotator has stopped, or it puts them back.
func (b *bench) deletePolicies(ctx context.Context) error {
	sel := metav1.ListOptions{LabelSelector: admission.ManagedByLabel + "=" + admission.ManagedBy}
	var errs []error
	for _, gvr := range []schema.GroupVersionResource{admissionBindings, admissionPolicies} {
		if err := b.dynamic.Resource(gvr).DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
			errs = append(errs, fmt.Errorf("delete the %s: %w", gvr.Resource, err))
		}
	}
	return errors.Join(errs...)
}

func (r admissionRun) label() string {
	if r.policy {
		return "with --admission-policies"
	}
	return "without admission policy"
}

// latencies returns the create→annotated latencies and the create
// requests' own, each sorted.
func (r admissionRun) latencies() (annotated, request []time.Duration) {
	for _, c := range r.created {
		annotated = append(annotated, c.latency)
		request = append(request, c.request)
	}
	slices.Sort(annotated)
	slices.Sort(request)
	return annotated, request
}

func (r admissionRun) inResponse() int {
	n := 0
	for _, c := range r.created {
		if c.inResponse {
			n++
		}
	}
	return n
}

func printAdmission(w io.Writer, runs []admissionRun) {
	fmt.Fprint(w, "\n## Annotating at creation: kube-annotator without and with its admission policy\n\n")
	fmt.Fprintln(w, "| kube-annotator | objects created one at a time | other objects cached | annotated in the create response | create→annotated p50 (ms) | p99 (ms) | max (ms) | PATCH per object | create request p50 (ms) | create request p99 (ms) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var p50, p99 []time.Duration
	for _, r := range runs {
		lat, req := r.latencies()
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | %s | %.2f | %s | %s |\n", r.label(), len(r.created), r.objects, r.inResponse(),
			ms(percentile(lat, 0.50)), ms(percentile(lat, 0.99)), ms(lat[len(lat)-1]), float64(r.patches)/float64(len(r.created)),
			ms(percentile(req, 0.50)), ms(percentile(req, 0.99)))
		p50, p99 = append(p50, percentile(req, 0.50)), append(p99, percentile(req, 0.99))
	}
	if len(runs) == 2 {
		fmt.Fprintf(w, "\nWhat the policy adds to the create request: %s ms at p50, %s ms at p99.\n", signedMS(p50[1]-p50[0]), signedMS(p99[1]-p99[0]))
	}
	fmt.Fprint(w, `
Deployments, ReplicaSets, Pods and Frigates in turn, each created once the previous one was seen annotated, while a
fresh kube-annotator ran: first without, then with --admission-policies (measured once its policy took effect).
create→annotated: from the create request's return until the benchmark's watch saw the annotation; 0 when the create
response carried it. PATCH: requests the API server served on the four resources from the first create until 2s after
the last, per object created. Create request: from the request's start until its response, at the client.
`)
}

// signedMS is d in milliseconds, with its sign.
func signedMS(d time.Duration) string {
	return fmt.Sprintf("%+.1f", float64(d)/float64(time.Millisecond))
}
