package e2e

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/shard"
	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// previousRelease is the commit the upgrade test builds as the previous
// release: main before the durable formats had versions. No release is
// tagged yet; once one is, name its tag here.
const previousRelease = "1ed6e69"

// upgradeBatch is how many objects the upgrade test creates at each of
// its three steps: before, during and after the upgrade.
const upgradeBatch = 120

// A shard group of two replicas of the previous release annotates
// objects; a rolling upgrade, as a Deployment makes one (one new replica
// up and ready before an old one stops), replaces them one by one with
// this build; objects are created at each step. Every object is
// annotated, with at most 1.01 PATCH per object over the whole upgrade;
// the old replicas' Leases are gone and the new ones carry the format;
// the record lists what both versions wrote and nothing else, and no
// object carries a key the field manager owns that the rules do not want
// (diff, read-only, finds nothing to change).
func TestUpgradeShardGroup(t *testing.T) {
	previous := buildPreviousRelease(t)
	started := time.Now()
	g := newShardGroup(t, env)
	before := requestsOn(t, env)
	var old []*proc.Process
	for range 2 {
		old = append(old, g.startBinary(t, previous))
	}
	g.waitSteady(t, 2)
	workloadsOn(t, env, g.ns, "previous", upgradeBatch)
	waitWorkloadsOn(t, env, g.ns, "", 90*time.Second)

	for i, o := range old {
		g.startBinary(t, binary)
		g.waitSteady(t, 3)
		o.Terminate(t)
		g.procs = slices.DeleteFunc(g.procs, func(p *proc.Process) bool { return p == o })
		g.waitSteady(t, 2)
		prefix := []string{"mixed", "upgraded"}[i]
		workloadsOn(t, env, g.ns, prefix, upgradeBatch)
		waitWorkloadsOn(t, env, g.ns, batchLabel+"="+prefix, 60*time.Second)
	}
	waitWorkloadsOn(t, env, g.ns, "", 30*time.Second)

	objects := 3 * upgradeBatch
	var writes int
	var served h.Requests
	// The API server counts a request once it has answered it.
	_ = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 2*time.Second, true, func(context.Context) (bool, error) {
		served = requestsOn(t, env).Sub(before)
		writes = workloadWrites(served)
		return writes >= objects, nil
	})
	t.Logf("upgraded in %v: %d PATCH and APPLY requests for %d objects (%.4f per object); every write by verb, resource and code: %s",
		time.Since(started).Round(100*time.Millisecond), writes, objects, float64(writes)/float64(objects),
		served.WriteSeries(workloadResources()...))
	if writes < objects || float64(writes) > 1.01*float64(objects) {
		t.Errorf("%d PATCH requests for %d objects, want one each and at most 1%% more", writes, objects)
	}
	g.checkUpgradedLeases(t)
	g.checkUpgradedRecord(t)
	checkNoOrphanedKeys(t, g.ns)
}

// buildPreviousRelease builds previousRelease from the repository's git
// history into a temporary directory, once per test run, and returns the
// binary. Without that history it skips the test, or fails it under CI.
func buildPreviousRelease(t *testing.T) string {
	t.Helper()
	root := h.RepoRoot()
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", previousRelease+"^{commit}").CombinedOutput(); err != nil {
		msg := "the upgrade test builds the previous release, commit " + previousRelease + ", from git history, which is not here (" +
			strings.TrimSpace(string(out)) + " " + err.Error() + "); clone with full history (git fetch --unshallow)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	src, tarball, bin := filepath.Join(dir, "src"), filepath.Join(dir, "src.tar"), filepath.Join(dir, "kube-annotator-previous")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []*exec.Cmd{
		exec.Command("git", "-C", root, "archive", "--format=tar", "-o", tarball, previousRelease),
		exec.Command("tar", "-xf", tarball, "-C", src),
	} {
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
	}
	// -trimpath keeps the temporary directory out of the build cache's
	// keys: the previous release's packages are compiled once, not on
	// every run (a link instead of 11-14 s of compiling).
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Dir, build.Env = src, append(os.Environ(), "GOWORK=off")
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the previous release %s: %v\n%s", previousRelease, err, out)
	}
	t.Logf("built the previous release %s in %v", previousRelease, time.Since(start).Round(100*time.Millisecond))
	return bin
}

// startBinary starts a replica of the group running bin, which keeps its
// record in the group's namespace.
func (g *shardGroup) startBinary(t *testing.T, bin string) *proc.Process {
	t.Helper()
	p := proc.StartRun(t, bin, "--rules", g.rules, "-n", g.ns, "--kubeconfig", g.e.Kubeconfig, "--record-namespace", g.ns,
		"--shard-group", "annotators", "--leader-election-namespace", g.ns,
		"--shard-lease-duration", shardLease.String(), "--shard-renew-period", "1s")
	g.procs = append(g.procs, p)
	return p
}

// checkUpgradedLeases checks that the group's Leases are the live
// members' only, none left by an old replica, each in this build's format
// with no annotation but the format's.
func (g *shardGroup) checkUpgradedLeases(t *testing.T) {
	t.Helper()
	leases, err := g.leases.CoordinationV1().Leases(g.ns).List(t.Context(), metav1.ListOptions{LabelSelector: shard.GroupLabel + "=annotators"})
	if err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) != len(g.procs) {
		t.Errorf("%d Leases in the group, want those of the %d live members only", len(leases.Items), len(g.procs))
	}
	for _, l := range leases.Items {
		keys := slices.Sorted(maps.Keys(l.Annotations))
		if l.Annotations[shard.FormatAnnotation] != shard.Format || !slices.Equal(keys, []string{shard.FormatAnnotation, shard.SyncedAnnotation}) {
			t.Errorf("Lease %s annotations %v, want %s=%q and %s only", l.Name, l.Annotations, shard.FormatAnnotation, shard.Format, shard.SyncedAnnotation)
		}
	}
}

// checkUpgradedRecord checks that the record lists the four workloads of
// the group's namespace and nothing else, in format 1 (written by the
// previous release without a version, or by this one with it).
func (g *shardGroup) checkUpgradedRecord(t *testing.T) {
	t.Helper()
	cm, err := g.leases.CoreV1().ConfigMaps(g.ns).Get(t.Context(), record.Name("kube-annotator"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, w := range workloads {
		want = append(want, w.gvr.GroupResource().String()+" -n "+g.ns+"\n")
	}
	slices.Sort(want)
	if got := cm.Data[record.ResourcesKey]; got != strings.Join(want, "") {
		t.Errorf("record lists\n%s\nwant\n%s", got, strings.Join(want, ""))
	}
	for k, v := range cm.Data {
		if k != record.FieldManagerKey && k != record.ResourcesKey && (k != record.FormatKey || v != record.Format) {
			t.Errorf("record data.%s = %q: want only %s, %s and %s=%q", k, v, record.FieldManagerKey, record.ResourcesKey, record.FormatKey, record.Format)
		}
	}
	t.Logf("record data.%s after the upgrade: %q", record.FormatKey, cm.Data[record.FormatKey])
}

// checkNoOrphanedKeys checks that every object in ns carries, of the keys
// the field manager owns, the shipped rules' annotation only, and that
// this build's diff, which sends no write, finds nothing to change.
func checkNoOrphanedKeys(t *testing.T, ns string) {
	t.Helper()
	for _, o := range listWorkloads(t, env, ns, "") {
		owned := patch.OwnedBy(o.ManagedFields, "kube-annotator")
		if !maps.Equal(owned.Annotations, map[string]bool{sampleKey: true}) || len(owned.Labels) > 0 {
			t.Errorf("%s/%s: the field manager owns %+v, want the annotation %s only", o.Namespace, o.Name, owned, sampleKey)
		}
	}
	out, errOut, code := runCLIReadOnly(t, "diff", "--rules", rulesPath(), "-n", ns, "--record-namespace", ns, "--kubeconfig", env.Kubeconfig)
	if code != 0 {
		t.Errorf("diff after the upgrade: exit %d, want 0 (nothing to change)\n%s%s", code, out, errOut)
	}
}
