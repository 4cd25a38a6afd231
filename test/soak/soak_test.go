package soak

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// SoakSeedEnv names the environment variable that sets the chaos soak's
// random seed, to replay the schedule of faults of a failed run.
const SoakSeedEnv = "KUBE_ANNOTATOR_SOAK_SEED"

// The soak's shape: objects seeded before the controller starts, how long
// the faults last and how long the controller then has to converge.
const (
	soakNamespaces   = 5
	soakConfigMaps   = 1700 // per namespace; one in 20 not selected
	soakFrigates     = 300  // per namespace
	soakChaos        = 100 * time.Second
	soakSettle       = 90 * time.Second
	soakBudget       = 5 * time.Minute
	soakUser         = "soak-controller"
	soakPriority     = "soak"
	soakMemoryLimit  = 256 << 20 // deploy/'s memory limit, in bytes
	goroutinesSlack  = 20
	writesPerChange  = 1.05
	soakSeedingLimit = 16 // creations in parallel
)

// The chaos soak: 10,000 ConfigMaps and Frigates, and every fault of the
// suite at once for soakChaos: the API server's Priority and Fairness
// rejects the controller's requests beyond a few seats (429), connections
// are cut at random, etcd compacts the history the controller's watches
// resume from, the Frigate CRD is deleted and re-created, another writer
// changes foreign keys and tampers with managed ones, the rules are
// reloaded, and objects are created and deleted. Once the faults stop and
// the controller settles, every object carries what the final rules want,
// every key someone else set is as they left it, objects the rules do not
// select were never written, each needed change took at most 1.05 writes,
// goroutines are back to where they were, and memory stayed in bounds.
//
// A "needed change" is an object that had to be written once more:
//   - a selected object created (seeded, by the churn, after the CRD came
//     back);
//   - a rules reload, for each object that carried what the old rules
//     wanted when the controller switched to the new ones (counted from a
//     list just before the new file is in place, plus the objects the
//     controller wrote as the old rules want after that list, which the
//     API server's audit log tells; objects that had not converged yet
//     need only their pending write);
//   - the other writer tampering with the managed key of an object that
//     carried everything the rules want (unless a reload's list, under
//     way, counts the object already: its write restores the key).
//
// An object deleted while not carrying what the rules want (by the churn,
// or with the CRD, as the last write to it in the audit log shows) gives
// back the write it was counted for. A create or a delete that failed
// without saying whether the API server applied it (the end of the faults
// cuts requests short) is counted by its outcome, which a GET tells once
// the controller settled. Races between these counts and the
// controller only ever make a write go uncounted (e.g. a tamper of an
// object while the controller switches rules), never count a write that
// was not needed, so the bound is conservative.
func TestSoakChaos(t *testing.T) {
	binary, err := h.BuildBinary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	seed := soakSeed(t)
	t.Logf("seed %d (replay with %s=%d)", seed, SoakSeedEnv, seed)
	apiFlags, auditLog := soakAuditFlags(t, t.TempDir())
	apiFlags["watch-cache"] = "false"
	cp := h.StartControlPlane(t, h.Options{APIServerFlags: apiFlags})
	cp.GrantClusterAdmin(t, soakUser)
	seats := cp.ThrottleUser(t, soakPriority, soakUser, 1)
	m := newSoakModel()
	namespaces := seedSoak(t, cp, m)
	seeded := time.Since(start)

	proxy, kubeconfig := cp.NewProxy(t)
	rulesFile, err := rulesFileFor(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	patches0 := servedPatches(t, cp)
	// client-go's reflector logs a watch that expired at -v=4.
	p := proc.StartRun(t, binary, "--rules", rulesFile, "--kubeconfig", kubeconfig, "--as", soakUser, "--vmodule", "reflector=4")
	p.WaitMetric(t, 60*time.Second, "kube_annotator_informers_synced", 2)
	goroutines0 := p.Metric(t, "go_goroutines")

	c := &chaos{e: cp, m: m, proxy: proxy, rulesFile: rulesFile, namespaces: namespaces, seed: seed}
	c.run(t.Context(), soakChaos)
	for _, err := range c.errs {
		t.Errorf("chaos: %v", err)
	}
	p.MustRun(t, "during the faults")
	settled := waitSoakSettled(t, p, cp, m, namespaces)
	writes0 := p.Metric(t, "kube_annotator_writes_total")
	testutil.Consistently(t, 3*time.Second, "no write once settled", func() bool {
		return p.Metric(t, "kube_annotator_writes_total") == writes0
	})
	quietWrites := p.Metric(t, "kube_annotator_writes_total") - writes0
	goroutines := p.Metric(t, "go_goroutines")
	hwm, err := proc.ProcStatusKiB(p.PID(), "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	body := p.Scrape(t)
	writes := promtext.MetricValue(body, "kube_annotator_writes_total", map[string]string{"result": "success"})
	writeErrors := promtext.MetricValue(body, "kube_annotator_writes_total", map[string]string{"result": "error"})
	// An expired watch (410) shows in client-go's reflector's log at -v=4
	// and, when the reflector hands it to the controller's error handler,
	// in the controller's metric: either is proof.
	expired := max(p.LogLines(t, h.WatchTooOld),
		int(promtext.MetricValue(body, "kube_annotator_list_watch_errors_total", map[string]string{"reason": "Expired"})))
	// The controller's PATCH requests that the API server applied, whether
	// or not the answer reached the controller: all minus the other writer's.
	patches := servedPatches(t, cp) - patches0 - m.foreign.Load() - m.tampered.Load()
	rejected, err := cp.ServerMetric(t.Context(), "apiserver_flowcontrol_rejected_requests_total", map[string]string{"priority_level": soakPriority})
	if err != nil {
		t.Fatal(err)
	}
	resolved, unsure, err := m.resolve(t.Context(), cp)
	if err != nil {
		t.Fatal(err)
	}
	v := checkSoak(t, cp, m, namespaces)
	audit := readPatchAudit(t, auditLog, soakUser, c)
	needed := m.needed.Load() + int64(audit.reloadWrites-audit.cycledBehind)
	// A PATCH whose answer a cut lost is applied, and then written again:
	// duplicate work no controller can avoid, left out of the ratio.
	ratio := float64(patches-int64(audit.lostReplies)) / float64(needed)

	t.Logf("seed %d: %d objects seeded in %v; %d live at the end (%d created and %d deleted during the faults). "+
		"Faults for %v: %v seats for the controller, %v requests rejected with 429; %d connection cuts, %d etcd compactions (%d watch expiries logged), "+
		"%d CRD delete/re-create, %d rules reloads (%d look-ups that could not ask the API server), %d foreign writes, %d tampers. Settled %v after the faults stopped. "+
		"%d PATCH requests applied for %d needed changes: %.4f per change (the controller counted %v successful writes and %v failed attempts); %v writes in 3 s of quiet. "+
		"go_goroutines %v before the faults, %v after; VmHWM %d MiB. Whole test %v",
		seed, soakObjects(), seeded.Round(time.Second), v.live, m.created.Load(), m.deleted.Load(),
		soakChaos, seats, rejected, c.cuts, c.compactions, expired, c.crdCycles, c.reloads, p.LogLines(t, "Could not ask the API server"), m.foreign.Load(), m.tampered.Load(),
		settled.Round(time.Millisecond), patches, needed, ratio, writes, writeErrors, quietWrites,
		goroutines0, goroutines, hwm>>10, time.Since(start).Round(time.Second))

	if v.wrong+v.unselectedWritten+v.unknown+v.missing != 0 {
		t.Errorf("%d selected objects do not carry exactly what the final rules want (or unselected ones carry soak keys); "+
			"%d unselected objects were written; %d objects unknown to the test, %d missing", v.wrong, v.unselectedWritten, v.unknown, v.missing)
		logWrong(t, p, v.wrongObjects, m.gen)
	}
	if v.foreignChanged+v.foreignLost != 0 {
		t.Errorf("%d foreign keys changed and %d lost, want 0", v.foreignChanged, v.foreignLost)
	}
	t.Logf("%d creates and deletes failed without saying whether the API server applied them (e.g. cut short by the end of the faults): %d were, by a GET once settled",
		unsure, resolved)
	t.Logf("audit: %d PATCH requests of the controller applied: %d changed the object, %d changed nothing, "+
		"%d of them after a PATCH whose answer a cut may have lost; %d wrote the rules of a generation older than the file's; "+
		"%d objects written as the old rules want after a reload's list needed one more write; "+
		"%d Frigates did not carry what the rules want when the CRD's deletion took them; most written: %v",
		audit.applied, audit.changed, audit.repeats, audit.lostReplies, audit.late, audit.reloadWrites, audit.cycledBehind, audit.most)
	if ratio > writesPerChange {
		t.Errorf("%.4f PATCH requests per needed change (%d for %d), want at most %v", ratio, patches, needed, writesPerChange)
	}
	if writes > float64(patches) {
		t.Errorf("the controller counted %v successful writes, the API server applied only %d of its PATCH requests", writes, patches)
	}
	if quietWrites != 0 {
		t.Errorf("%v writes once settled, want 0", quietWrites)
	}
	if rejected == 0 || c.cuts == 0 || c.compactions == 0 || expired == 0 || c.crdCycles == 0 || c.reloads == 0 || m.tampered.Load() == 0 {
		t.Errorf("a fault did not happen: %v rejected, %d cuts, %d compactions, %d expiries, %d CRD cycles, %d reloads, %d tampers",
			rejected, c.cuts, c.compactions, expired, c.crdCycles, c.reloads, m.tampered.Load())
	}
	if goroutines > goroutines0+goroutinesSlack {
		t.Errorf("go_goroutines %v after the faults, %v before: want at most %d more", goroutines, goroutines0, goroutinesSlack)
	}
	if hwm<<10 >= soakMemoryLimit {
		t.Errorf("VmHWM %d MiB, want under deploy/'s limit of %d MiB", hwm>>10, soakMemoryLimit>>20)
	}
	if took := time.Since(start); took > soakBudget {
		t.Errorf("the soak took %v, over its budget of %v", took.Round(time.Second), soakBudget)
	}
	p.MustRun(t, "before the end of the test")
}

// soakSeed returns the seed from SoakSeedEnv, or a new one.
func soakSeed(t *testing.T) uint64 {
	t.Helper()
	s := os.Getenv(SoakSeedEnv)
	if s == "" {
		return uint64(time.Now().UnixNano())
	}
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", SoakSeedEnv, s, err)
	}
	return seed
}

// soakObjects is how many objects seedSoak creates.
func soakObjects() int { return soakNamespaces * (soakConfigMaps + soakFrigates) }

// seedSoak creates the soak's namespaces and objects, recorded in m, and
// returns the namespaces.
func seedSoak(t *testing.T, e *h.Env, m *soakModel) []string {
	t.Helper()
	var namespaces []string
	var refs []soakRef
	for range soakNamespaces {
		ns := e.NewNamespace(t)
		namespaces = append(namespaces, ns)
		for i := range soakConfigMaps {
			refs = append(refs, soakRef{gvr: h.ConfigMaps, namespace: ns, name: fmt.Sprintf("cm-%d", i)})
		}
		for i := range soakFrigates {
			refs = append(refs, soakRef{gvr: h.Frigates, namespace: ns, name: fmt.Sprintf("f-%d", i)})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(refs))
	sem := make(chan struct{}, soakSeedingLimit)
	for i, ref := range refs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs <- m.create(t.Context(), e, ref, ref.gvr == h.Frigates || i%20 != 7)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return namespaces
}

// waitSoakSettled waits until every live selected object carries what the
// final rules want and the controller's queue is empty, and returns how
// long that took. It lists the objects only while the queue is empty: a
// list of every object is read from etcd (no watch cache) and encoded,
// and listing every second competed with the controller's writes for the
// API server's two shared cores (a run stalled with 10,379 keys queued 90 s
// after the faults, every worker waiting on the API server).
func waitSoakSettled(t *testing.T, p *proc.Process, e *h.Env, m *soakModel, namespaces []string) time.Duration {
	t.Helper()
	start := time.Now()
	gen := m.generation()
	var done, want int
	var behind []string
	var behindObjs []*unstructured.Unstructured
	check := func(ctx context.Context) {
		objs, err := (&chaos{e: e, namespaces: namespaces}).listAll(ctx)
		if err != nil {
			return // the API server is busy: try again
		}
		want, behind, behindObjs = 0, nil, nil
		for i := range objs {
			if objs[i].GetLabels()[selectLabel] != "yes" {
				continue
			}
			want++
			if !convergedTo(&objs[i], gen) && len(behind) < 5 {
				behind = append(behind, fmt.Sprintf("%s/%s %v %v", objs[i].GetNamespace(), objs[i].GetName(), soakCarried(&objs[i]), objs[i].GetLabels()))
				behindObjs = append(behindObjs, &objs[i])
			}
		}
		done = converged(objs, gen)
	}
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, soakSettle, true, func(ctx context.Context) (bool, error) {
		if depth, err := p.TryMetric("workqueue_depth"); err != nil || depth != 0 {
			return false, nil
		}
		done, want = 0, -1
		check(ctx)
		return done == want, nil
	})
	if err != nil {
		check(t.Context())
		logWrong(t, p, behindObjs[:min(len(behindObjs), 3)], gen)
		t.Fatalf("%d of %d selected objects carry what the rules (generation %d) want %v after the faults, e.g. %v; workqueue_depth %v",
			done, want, gen, soakSettle, behind, p.Metric(t, "workqueue_depth"))
	}
	return time.Since(start)
}

// soakVerdict counts the objects that break an invariant.
type soakVerdict struct {
	live, wrong, unselectedWritten, foreignChanged, foreignLost, unknown, missing int
	// wrongObjects are the first objects counted wrong, as listed, for
	// the failure to show with the controller's log lines about them.
	wrongObjects []*unstructured.Unstructured
}

// checkSoak compares every object with what the test knows it must carry.
func checkSoak(t *testing.T, e *h.Env, m *soakModel, namespaces []string) soakVerdict {
	t.Helper()
	objs, err := (&chaos{e: e, namespaces: namespaces}).listAll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var v soakVerdict
	seen := map[soakRef]bool{}
	for i := range objs {
		o := &objs[i]
		ref := soakRef{gvr: h.ConfigMaps, namespace: o.GetNamespace(), name: o.GetName()}
		if o.GetKind() == "Frigate" {
			ref.gvr = h.Frigates
		}
		st, ok := m.live[ref]
		if !ok {
			v.unknown++
			continue
		}
		seen[ref] = true
		v.live++
		v.check(o, st, m.gen)
	}
	v.missing = len(m.live) - len(seen)
	return v
}

// check adds what is wrong with o, which the test knows as st, to v.
func (v *soakVerdict) check(o *unstructured.Unstructured, st *soakState, gen int) {
	switch {
	case st.selected && !convergedTo(o, gen), !st.selected && len(soakCarried(o)) != 0:
		v.wrong++
		if len(v.wrongObjects) < 3 {
			v.wrongObjects = append(v.wrongObjects, o)
		}
	case !st.selected && o.GetResourceVersion() != st.rv:
		v.unselectedWritten++
	}
	writer := st.writer
	if st.unsure != "" && o.GetAnnotations()[writerKey] == st.unsure {
		writer = st.unsure // the failed request was applied after all
	}
	foreign := []struct {
		got  map[string]string
		key  string
		want string
	}{
		{o.GetAnnotations(), ownerKey, o.GetName()},
		{o.GetAnnotations(), writerKey, writer},
		{o.GetLabels(), writerLabel, writer},
	}
	for _, f := range foreign {
		got, ok := f.got[f.key]
		switch {
		case f.want != "" && !ok:
			v.foreignLost++
		case got != f.want:
			v.foreignChanged++
		}
	}
}
