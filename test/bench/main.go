package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/raw"
)

// main runs the benchmark. What it measures, exactly:
//
// It seeds --objects objects (Deployments and ReplicaSets with no replicas,
// Pods, Frigates: a quarter each, over a few namespaces), then, for
// --rounds rounds, runs each of five runners in turn, each annotating
// every object with sample-controller: "True" using --workers workers:
//
//   - raw: this program's "raw" subcommand; one paginated list of each
//     resource and a merge patch per object through the dynamic client
//     (whole objects in JSON), no cache, no queue; it exits when done.
//   - raw-metadata: the same through the metadata client, whose lists and
//     patches the API server answers with the objects' metadata only, in
//     protobuf: the least any program can do.
//   - raw-metadata-watch: the same, watching the resources' metadata
//     meanwhile, as a controller does: it receives the event of each of
//     its own writes, which the API server converts to metadata for it.
//   - controller-runtime: test/bench/crrunner, the controller a Kubebuilder
//     user would write (its own module, so that controller-runtime never
//     enters the product).
//   - kube-annotator: the product binary (--binary), `run` with a rules file
//     for the same four resources.
//
// The benchmark builds the first three as `make build` builds the last,
// without cgo, so that their peak RSS compare.
//
// The objects are small: they carry nothing but what their kind needs.
// With --realistic, everything is measured again on realistic objects,
// which carry what objects in a cluster do: ten labels, four annotations
// among which kubectl's last-applied-configuration (about 3 KB), and the
// managedFields entries of kubectl and Helm.
//
// A run lasts from the process's start until the benchmark's own watch sees
// every object annotated. Controllers then keep running: the API server
// must serve no write during --steady of steady state, nor during --steady
// after a restart. Between runs the annotation is removed from every object.
// Request counts are the API server's own (apiserver_request_total) on the
// four resources, taken after the reset so that it is not counted; so is
// the CPU time kube-apiserver and etcd spend on each runner
// (process_cpu_seconds_total on their /metrics, from just before its start
// until every object is annotated). --apiserver-profile writes a CPU
// profile of kube-apiserver for each run; --variant adds other builds or
// settings of kube-annotator as runners, --runners picks the runners.
//
// Then, for kube-annotator alone, in fresh processes once converged: its Go
// heap (from its metrics endpoint; also with GOGC=10, which keeps it close
// to the live heap), peak and at-rest RSS, and the time from its start
// until its informers synced, at 0 and --objects objects, and at each
// --memory-objects; at the largest, how long a reload takes whose rules
// make the caches keep one more label (every informer lists again); at
// idle, the latency from creating an object to seeing it annotated; and at
// the largest count, its heap again with a when: condition on a field of
// the Deployments' spec (whose informer then caches the fields read, not
// the metadata alone), and the difference per Deployment.
//
// Last, annotating at creation: --latency objects (Deployments,
// ReplicaSets, Pods and Frigates in turn) are created one at a time, each
// once the previous one was seen annotated, twice, each time while a fresh
// kube-annotator runs: first as above, then with --admission-policies,
// once its MutatingAdmissionPolicy and binding exist and the API server
// applies them (probe Pods are created until one's create response carries
// the annotation). For each: how many create responses carried the
// annotation, the create→annotated latency (0 for those), the PATCH
// requests the API server served per object created (the controller's
// writes: 1 without the policy, 0 with it), and the create request's own
// latency at the client, whose difference between the two is what the
// policy costs each create. The policy is deleted when done.
//
// With --shards N, the benchmark measures sharding instead of the four
// runners and kube-annotator's memory at --objects (see shards.go): the
// control plane runs with the ShardedListAndWatch feature gate, so that
// each replica receives only its share, and for --rounds rounds one
// kube-annotator replica, N static shards (--shard i --total-shards N)
// and a shard group of N replicas (--shard-group) annotate every object
// in turn; then (unless --reshard=false) a shard group grows from N to
// N+1 replicas and shrinks back while it converges; then fresh replicas of
// each setup, with GOGC=10, show each replica's cached objects and heap,
// less the heap of the same setup measured before the objects were
// seeded. Both static
// shards and a group are measured because they differ where it matters
// here: static shards know their range from the start, group members
// first find each other through Leases and may hand ranges over.
// --latency, --steady and --memory-objects do not apply.
//
// With --owners N, the benchmark measures values read from owners
// instead (test/bench/owners): with kube-controller-manager running, one
// Deployment of N replicas (Pods stay Pending: no kubelet) and a control
// group of other Deployments' and bare Pods; kube-annotator reading
// `team: {fromOwner: {label: team}}` on Pods converges, then the
// Deployment is relabelled team=a → team=b: the PATCH requests the API
// server served on Pods (one per Pod of the Deployment), the control
// Pods' resourceVersions (unchanged), the time until the benchmark's
// watch saw the last Pod relabelled and the CPU, against the raw loop
// relabelling the same Pods (`raw --label`); then kube-annotator's heap
// with GOGC=rig.LiveGOGC, reading owners, again with --owners-cached
// more Deployments with no replicas and their ReplicaSets (the
// difference per owner cached), and with a literal annotation that
// reads no owner.
//
// Results are medians over the rounds and ratios between runners measured
// in the same run: absolute numbers depend on the machine and on whatever
// else runs on it. Progress goes to stderr, the tables to stdout.
func main() {
	if len(os.Args) > 1 && os.Args[1] == raw.Command {
		os.Exit(raw.Main(os.Args[2:]))
	}
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		progress.Logf("FAILED after %v: %v", progress.Elapsed(), err)
		stop()
		os.Exit(1)
	}
	progress.Logf("Done in %v", progress.Elapsed())
}
