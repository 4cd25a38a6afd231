package e2e

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/shard"
	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// shardLease is the Lease duration of the dynamic sharding tests: a
// replica that died without deleting its Lease counts 5 s longer.
const shardLease = 5 * time.Second

// A shard group of three replicas splits 3,000 objects of the shipped
// rules' four resources; one is killed and its objects move to the others
// within the lease duration + 5 s; a replacement joins; the group grows to
// four and shrinks to three while objects are created. Each change moves
// at most 1/3 + 10% of the objects, and every object is annotated.
func TestShardedRunDynamic(t *testing.T) {
	withAndWithoutGate(t, func(t *testing.T, e *h.Env, gate bool) {
		g := newShardGroup(t, e)
		workloadsOn(t, e, g.ns, "obj", shardedObjects)
		before := requestsOn(t, e)
		for range 3 {
			g.start(t)
		}
		took := waitWorkloadsOn(t, e, g.ns, "", 90*time.Second)
		g.waitSteady(t, 3)
		writes := workloadWrites(requestsOn(t, e).Sub(before))
		t.Logf("converged in %v with %d patches for %d objects (%d in overlap)", took, writes, shardedObjects, writes-shardedObjects)
		if writes < shardedObjects || writes > shardedObjects*105/100 {
			t.Errorf("%d patches for %d objects, want one each and at most 5%% more", writes, shardedObjects)
		}
		g.checkCached(t, shardedObjects)

		g.killOne(t)
		g.start(t) // its replacement
		steady := g.waitSteady(t, 3)
		steady = g.changeWhileCreating(t, "3 to 4", steady, 4, func() { g.start(t) })
		g.changeWhileCreating(t, "4 to 3", steady, 3, func() { g.procs[len(g.procs)-1].Terminate(t); g.procs = g.procs[:len(g.procs)-1] })
		waitWorkloadsOn(t, e, g.ns, "", 30*time.Second)
	})
}

// shardGroup is the replicas of one shard group, in a namespace of their
// own that holds their Leases and the objects they annotate.
type shardGroup struct {
	e       *h.Env
	ns      string
	rules   string
	leases  kubernetes.Interface
	procs   []*proc.Process
	created atomic.Int64
}

func newShardGroup(t *testing.T, e *h.Env) *shardGroup {
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &shardGroup{e: e, ns: e.NewNamespace(t), rules: rulesPath(), leases: cs}
}

// start starts a replica of the group.
func (g *shardGroup) start(t *testing.T) {
	t.Helper()
	g.procs = append(g.procs, startRun(t, "--rules", g.rules, "-n", g.ns, "--kubeconfig", g.e.Kubeconfig,
		"--shard-group", "annotators", "--leader-election-namespace", g.ns,
		"--shard-lease-duration", shardLease.String(), "--shard-renew-period", "1s"))
}

// owners reads the live members' Leases: the owner of each virtual range
// that a member announces as synced, and the number of live members.
func (g *shardGroup) owners(t *testing.T) (owner map[int]string, members int, overlap int) {
	t.Helper()
	leases, err := g.leases.CoordinationV1().Leases(g.ns).List(t.Context(), metav1.ListOptions{LabelSelector: shard.GroupLabel + "=annotators"})
	if err != nil {
		t.Fatal(err)
	}
	owner = map[int]string{}
	for _, l := range leases.Items {
		if l.Spec.RenewTime.Add(time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0)) * time.Second).Before(time.Now()) {
			continue
		}
		members++
		s, err := shard.ParseVSet(l.Annotations[shard.SyncedAnnotation])
		if err != nil {
			t.Fatal(err)
		}
		for v := range shard.VirtualRanges {
			if s.Has(v) {
				if _, taken := owner[v]; taken {
					overlap++
				}
				owner[v] = ptr.Deref(l.Spec.HolderIdentity, "")
			}
		}
	}
	return owner, members, overlap
}

// waitSteady waits until n live members announce every virtual range,
// each once, and every replica is ready; it returns the owners.
func (g *shardGroup) waitSteady(t *testing.T, n int) map[int]string {
	t.Helper()
	var owner map[int]string
	var members, overlap int
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		owner, members, overlap = g.owners(t)
		if members != n || overlap != 0 || len(owner) != shard.VirtualRanges {
			return false, nil
		}
		for _, p := range g.procs {
			if p.Ready(t) != 200 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("after 60s: %d live members announce %d virtual ranges, %d twice; want %d members announcing each of %d once, all ready",
			members, len(owner), overlap, n, shard.VirtualRanges)
	}
	return owner
}

// checkCached checks that each replica caches its share of objects ± 15%
// and that they cache each object once together.
func (g *shardGroup) checkCached(t *testing.T, objects int) {
	t.Helper()
	share, total := float64(objects)/float64(len(g.procs)), 0.0
	for i, p := range g.procs {
		cached := p.Metric(t, "kube_annotator_cached_objects")
		t.Logf("replica %d caches %v objects (share %.0f), owns %.3f of the hash space", i, cached, share, p.Metric(t, "kube_annotator_shard_owned_fraction"))
		total += cached
		if cached < 0.85*share || cached > 1.15*share {
			t.Errorf("replica %d caches %v objects, want %.0f ± 15%%", i, cached, share)
		}
	}
	if int(total) != objects {
		t.Errorf("the replicas cache %v objects together, want each of %d once", total, objects)
	}
}

// killOne kills a replica with SIGKILL, creates objects at once, and
// checks that all are annotated within the lease duration + 5 s.
func (g *shardGroup) killOne(t *testing.T) {
	t.Helper()
	victim := g.procs[0]
	g.procs = g.procs[1:]
	if err := victim.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	workloadsOn(t, g.e, g.ns, "after-kill", 300)
	created := time.Since(killed)
	// The takeover is due lease + 5 s after the kill; on a loaded
	// machine creating the objects can take about as long, and the last
	// ones created get 5 s of their own.
	deadline := max(shardLease+5*time.Second, created+5*time.Second)
	waitWorkloadsOn(t, g.e, g.ns, batchLabel+"=after-kill", deadline-time.Since(killed))
	t.Logf("SIGKILL: 300 objects created in %v annotated %v after the kill (lease %v)",
		created.Round(100*time.Millisecond), time.Since(killed).Round(100*time.Millisecond), shardLease)
	g.waitSteady(t, 2)
}

// changeWhileCreating makes a change to the group while objects are
// created, waits until n members are steady, and checks that objects whose
// owner changed are at most 1/3 + 10% and that every object is
// annotated. It returns the new owners.
func (g *shardGroup) changeWhileCreating(t *testing.T, name string, before map[int]string, n int, change func()) map[int]string {
	t.Helper()
	g.created.Store(0)
	start, writesBefore := time.Now(), requestsOn(t, g.e)
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			g.create(t, fmt.Sprintf("%s-%d", strings.ReplaceAll(name, " ", ""), i), 10)
			time.Sleep(100 * time.Millisecond)
		}
	})
	change()
	after := g.waitSteady(t, n)
	stop()
	wg.Wait()
	took := waitWorkloadsOn(t, g.e, g.ns, "", 30*time.Second)
	// The API server counts a request once it has answered it: wait a
	// moment for the count of the last patches.
	var writes int
	_ = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 2*time.Second, true, func(context.Context) (bool, error) {
		writes = workloadWrites(requestsOn(t, g.e).Sub(writesBefore))
		return writes >= int(g.created.Load()), nil
	})
	movedRanges, movedObjects, objects := 0, 0, 0
	for v := range shard.VirtualRanges {
		if before[v] != after[v] {
			movedRanges++
		}
	}
	for _, o := range listWorkloads(t, g.e, g.ns, "") {
		hash := fnv.New64a()
		hash.Write([]byte(o.UID))
		v := shard.VRangeOf(hash.Sum64())
		objects++
		if before[v] != after[v] {
			movedObjects++
		}
	}
	frac := float64(movedObjects) / float64(objects)
	t.Logf("%s: steady after %v, all annotated %v later; %d objects created meanwhile, %d patches (%d in overlap); owner changed for %d of %d virtual ranges and %d of %d objects (%.3f)",
		name, time.Since(start).Round(100*time.Millisecond), took.Round(100*time.Millisecond), g.created.Load(), writes, writes-int(g.created.Load()),
		movedRanges, shard.VirtualRanges, movedObjects, objects, frac)
	if frac > 1.0/3+0.10 {
		t.Errorf("%s moved %.3f of the objects, want at most 1/3 + 10%%", name, frac)
	}
	return after
}

// create creates n objects named prefix-0 … of the workloads, in turn, in
// the group's namespace. It may run on a goroutine of its own: it reports
// errors but does not stop the test.
func (g *shardGroup) create(t *testing.T, prefix string, n int) {
	for i := range n {
		gvr, obj := workloadObject(t, g.ns, prefix, i)
		if _, err := g.e.Dynamic.Resource(gvr).Namespace(g.ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Errorf("create %s %s: %v", gvr.Resource, obj.GetName(), err)
			return
		}
		g.created.Add(1)
	}
}

// deploy/sharded/group, a component on top of deploy/, renders and
// applies to a real API server: three replicas of the Deployment in one
// shard group, no leader election, a Role on the group's Leases that
// lets a member create, list, watch, renew and delete them (and no longer
// names the leader's), and a PodDisruptionBudget.
func TestDeployShardGroupApplies(t *testing.T) {
	applyComponent(t, "sharded/group", []string{
		"kind: Deployment", "replicas: 3", "--shard-group=kube-annotator", "kind: PodDisruptionBudget", "maxUnavailable: 1",
		"kind: Role\n", "  - leases\n  verbs:\n  - create\n  - get\n  - list\n  - watch\n  - update\n  - delete\n", "path: /readyz",
	}, []string{"kind: StatefulSet", "--leader-elect", "resourceNames:\n  - kube-annotator\n"})
}
