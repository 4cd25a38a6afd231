package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// shardedObjects is the number of objects the sharding tests split: a
// quarter each of the resources of the shipped rules.yaml.
const shardedObjects = 3000

// Three static shards split 3,000 objects of the shipped rules' four
// resources, once on an API server that applies shard selectors
// (ShardedListAndWatch on) and once on one that does not (off: every
// replica receives everything and drops the other shards' objects itself).
// Either way every object is annotated with one PATCH, and each replica
// caches a third of them.
func TestShardedRunStatic(t *testing.T) {
	withAndWithoutGate(t, func(t *testing.T, e *h.Env, gate bool) {
		ns := e.NewNamespace(t)
		seeded := time.Now()
		workloadsOn(t, e, ns, "obj", shardedObjects)
		t.Logf("seeded %d objects of %s in %v", shardedObjects, strings.Join(workloadResources(), ", "), time.Since(seeded).Round(100*time.Millisecond))
		before := requestsOn(t, e)
		var procs []*proc.Process
		for i := range 3 {
			procs = append(procs, startRun(t, "--rules", rulesPath(), "-n", ns, "--kubeconfig", e.Kubeconfig,
				"--shard", strconv.Itoa(i), "--total-shards", "3"))
		}
		defer explainShards(t, e, ns, procs)
		// 20 s on an idle machine; slower, not stuck, under load.
		took := waitWorkloadsProgressing(t, e, ns, 30*time.Second, 4*time.Minute)
		for _, p := range procs {
			p.WaitMetric(t, 10*time.Second, "kube_annotator_informers_synced", float64(len(workloads)))
		}
		writes := workloadWrites(requestsOn(t, e).Sub(before))
		t.Logf("converged in %v with %d patches", took, writes)
		if writes != shardedObjects {
			t.Errorf("%d patches for %d objects, want one each", writes, shardedObjects)
		}
		closed := 0.0
		if gate {
			closed = checkServerFiltered(t, e)
		}
		checkShares(t, procs, gate, closed > 0)
	})
}

// withAndWithoutGate runs test as two subtests: on a control plane of
// its own whose API server applies shard selectors (the
// ShardedListAndWatch feature gate on), and on the suite's, where it is
// off. On a version without the gate (before 1.36), whose API server would
// refuse to start with it, only the second runs: that is the degraded
// mode, every replica filtering for itself. serverMode is what the API
// server at hand says of its gate.
func withAndWithoutGate(t *testing.T, test func(t *testing.T, e *h.Env, serverMode bool)) {
	gates := []bool{true, false}
	if !env.Features.ShardSelectorGate {
		t.Logf("%s: shard selectors cannot be turned on; testing client-side filtering only", env.Features.Version)
		gates = []bool{false}
	}
	for _, gate := range gates {
		t.Run(fmt.Sprintf("ShardedListAndWatch=%v", gate), func(t *testing.T) {
			e := env
			if gate {
				e = h.StartControlPlane(t, h.Options{APIServerFlags: map[string]string{"feature-gates": "ShardedListAndWatch=true"}})
			}
			test(t, e, e.Features.ShardSelectors)
		})
	}
}

// checkShares checks each replica's metrics: it caches a third of the
// objects within 15%, every resource's informer runs in the mode the API
// server allows, and it received from the API server only its share when
// the server applied the selector, else everything. relisted says that the
// API server closed watches of a replica that read too slowly: that
// replica then lists its share again.
func checkShares(t *testing.T, procs []*proc.Process, serverMode, relisted bool) {
	t.Helper()
	total := 0.0
	share := float64(shardedObjects) / float64(len(procs))
	mode := map[bool]string{true: "server", false: "client"}[serverMode]
	for i, p := range procs {
		body := p.Scrape(t)
		// Summed over the resources: cached_objects is one series, the
		// others have one per resource.
		cached := promtext.MetricValue(body, "kube_annotator_cached_objects", nil)
		received := promtext.MetricValue(body, "kube_annotator_shard_objects_received_total", nil)
		dropped := promtext.MetricValue(body, "kube_annotator_shard_objects_dropped_total", nil)
		fraction := promtext.MetricValue(body, "kube_annotator_shard_owned_fraction", nil)
		t.Logf("shard %d: cached %v (share %.0f), received %v, dropped %v, owns %.3f of the hash space", i, cached, share, received, dropped, fraction)
		total += cached
		if math.Abs(cached-share) > 0.15*share {
			t.Errorf("shard %d caches %v objects, want %.0f ± 15%%", i, cached, share)
		}
		for _, w := range workloads {
			res := w.gvr.GroupResource().String()
			// The API server filters custom resources too, but its lists
			// of them do not say so (an UnstructuredList has no shardInfo):
			// their informers run in client mode and find nothing to drop.
			wantMode := mode
			if w.gvr == h.Frigates {
				wantMode = "client"
			}
			if m := promtext.MetricValue(body, "kube_annotator_shard_informer_mode", map[string]string{"resource": res, "mode": wantMode}); m != 1 {
				t.Errorf("shard %d: informer of %s not in %s mode", i, res, wantMode)
			}
			// Without the server's filter, a replica lists every object.
			r := promtext.MetricValue(body, "kube_annotator_shard_objects_received_total", map[string]string{"resource": res})
			if !serverMode && r < shardedObjects/float64(len(workloads)) {
				t.Errorf("shard %d received %v %s with client-side sharding, want every one", i, r, res)
			}
		}
		// A replica receives its initial list, then a watch event for
		// each object it patched: twice its share, and once more after a
		// watch closed for a slow reader. In client mode it receives
		// every object and every other replica's patch as well.
		want := 2 * cached
		if relisted {
			want = 3 * cached
		}
		if serverMode && (received > want+10 || dropped != 0) {
			t.Errorf("shard %d received %v objects and dropped %v with server-side sharding, want at most about %v and none dropped", i, received, dropped, want)
		}
		if !serverMode && (received < shardedObjects || dropped < shardedObjects-cached) {
			t.Errorf("shard %d received %v objects and dropped %v with client-side sharding, want every object received and the others' dropped", i, received, dropped)
		}
	}
	if total != shardedObjects {
		t.Errorf("the shards cache %v objects together, want each of the %d once", total, shardedObjects)
	}
}

// checkServerFiltered checks from the API server's side that it served
// the replicas a sharded watch of each resource and kept other shards'
// events from them. It returns how many watches the API server closed
// because their client read too slowly.
func checkServerFiltered(t *testing.T, e *h.Env) (closed float64) {
	t.Helper()
	perResource := shardedObjects / len(workloads)
	for _, resource := range workloadResources() {
		res := map[string]string{"resource": resource}
		var v [3]float64
		for i, name := range []string{"apiserver_watch_shards_total", "apiserver_watch_filtered_events_total", "apiserver_terminated_watchers_total"} {
			var err error
			if v[i], err = e.ServerMetric(t.Context(), name, res); err != nil {
				t.Fatal(err)
			}
		}
		watches, filtered, terminated := v[0], v[1], v[2]
		t.Logf("API server: %v sharded watches of %s (%v closed for unresponsiveness), %v events filtered out by shard selectors", watches, resource, terminated, filtered)
		// A watch the API server closes because its client reads too
		// slowly leaves its gauge twice (when closed, and when its
		// handler stops it), and the replica watches again, which the
		// gauge may not count yet: each such close lowers the gauge by
		// one or two.
		closed += terminated
		if watches+terminated > 3 || watches+2*terminated < 3 {
			t.Errorf("API server serves %v sharded watches of %s and closed %v, want 3 in all", watches, resource, terminated)
		}
		// Each patch is an event that two of the three watches do not get.
		if filtered < float64(2*perResource) {
			t.Errorf("API server filtered %v events of %s out of sharded watches, want at least %d", filtered, resource, 2*perResource)
		}
	}
	return closed
}

// deploy/sharded, a component on top of deploy/, renders and applies to a
// real API server: a StatefulSet of three shards instead of the
// Deployment, a PodDisruptionBudget, and no Lease permissions (nothing
// elects a leader).
func TestDeployShardedApplies(t *testing.T) {
	applyComponent(t, "sharded", []string{
		"kind: StatefulSet", "replicas: 3", "--shard=$(SHARD)", "--total-shards=3",
		"fieldPath: metadata.labels['apps.kubernetes.io/pod-index']", "kind: PodDisruptionBudget", "maxUnavailable: 1",
		"kind: ClusterRole\n", "name: kube-annotator-rules\n", "path: /readyz",
	}, []string{"kind: Deployment", "leases", "--leader-elect"})
}

// applyComponent renders deploy/ with the kustomize component
// deploy/component, checks that the result has every one of want and none
// of unwanted, and applies it.
func applyComponent(t *testing.T, component string, want, unwanted []string) {
	t.Helper()
	rendered := renderWithComponent(t, component)
	for _, w := range want {
		if !strings.Contains(rendered, w) {
			t.Errorf("rendered deploy/%s lacks %q", component, w)
		}
	}
	for _, u := range unwanted {
		if strings.Contains(rendered, u) {
			t.Errorf("rendered deploy/%s has %q", component, u)
		}
	}
	if out, err := kubectl(t, rendered, "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatalf("apply deploy/%s: %v\n%s", component, err, out)
	}
	t.Cleanup(func() { removeOptOutLock(t) })
}

// renderWithComponent renders deploy/ with the kustomize component
// deploy/component, as a user's kustomization does (kustomize does not let
// an overlay inside deploy/ build on deploy/).
func renderWithComponent(t *testing.T, component string) string {
	t.Helper()
	dir := t.TempDir()
	deploy, err := filepath.Rel(dir, filepath.Join(h.RepoRoot(), "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	kustomization := "resources: [" + deploy + "]\ncomponents: [" + deploy + "/" + component + "]\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	rendered, err := kubectl(t, "", "kustomize", dir)
	if err != nil {
		t.Fatalf("kubectl kustomize deploy/ with deploy/%s: %v", component, err)
	}
	return rendered
}

// explainShards logs, when t failed, what each of the sharded replicas
// procs says of itself and up to 10 objects of ns without the shipped
// rules' annotation: which replica fell behind, and why, when the
// objects did not converge.
func explainShards(t *testing.T, e *h.Env, ns string, procs []*proc.Process) {
	if !t.Failed() {
		return
	}
	for i, p := range procs {
		body, err := p.ReadMetrics()
		if err != nil {
			t.Logf("replica %d: no metrics: %v", i, err)
			continue
		}
		t.Logf("replica %d: cached %v, workqueue_depth %v, writes %v (errors %v), list/watch errors %v, received %v, dropped %v",
			i, promtext.MetricValue(body, "kube_annotator_cached_objects", nil), promtext.MetricValue(body, "workqueue_depth", nil),
			promtext.MetricValue(body, "kube_annotator_writes_total", map[string]string{"result": "success"}),
			promtext.MetricValue(body, "kube_annotator_writes_total", map[string]string{"result": "error"}),
			promtext.MetricValue(body, "kube_annotator_list_watch_errors_total", nil),
			promtext.MetricValue(body, "kube_annotator_shard_objects_received_total", nil),
			promtext.MetricValue(body, "kube_annotator_shard_objects_dropped_total", nil))
		out, _ := p.ReadLog()
		lines := strings.Split(out, "\n")
		errs := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "E") || strings.Contains(l, "Watch close") || strings.Contains(l, "too old") {
				if errs++; errs <= 5 {
					t.Logf("replica %d logged: %s", i, l)
				}
			}
		}
		t.Logf("replica %d: %d error or watch-close lines", i, errs)
	}
	n := 0
	for _, o := range listWorkloads(t, e, ns, "") {
		if o.Annotations[sampleKey] != sampleValue && n < 10 {
			n++
			t.Logf("not annotated: %s %s/%s uid %s resourceVersion %s created %v", o.Kind, o.Namespace, o.Name, o.UID, o.ResourceVersion, o.CreationTimestamp.Time)
		}
	}
}

// waitWorkloadsProgressing is waitWorkloadsOn for a heavily loaded
// machine: it waits while the number of annotated objects of ns grows,
// and fails once it stood still for stall, or after limit. A slow
// convergence passes; a stuck one fails within stall of getting stuck.
func waitWorkloadsProgressing(t *testing.T, e *h.Env, ns string, stall, limit time.Duration) time.Duration {
	t.Helper()
	start, moved := time.Now(), time.Now()
	last, done, total := -1, 0, 0
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, limit, true, func(context.Context) (bool, error) {
		done, total = workloadsAnnotatedOn(t, e, ns, "")
		switch {
		case total > 0 && done == total:
			return true, nil
		case done != last:
			last, moved = done, time.Now()
		case time.Since(moved) > stall:
			return false, fmt.Errorf("%d of %d objects annotated after %v, none more in the last %v", done, total, time.Since(start).Round(time.Second), stall)
		}
		return false, nil
	})
	switch {
	case wait.Interrupted(err):
		t.Fatalf("%d of %d objects annotated after %v", done, total, limit)
	case err != nil:
		t.Fatal(err)
	}
	return time.Since(start)
}
