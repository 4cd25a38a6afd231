package soak

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/faults"
)

// chaos runs the soak's faults together until its context ends; each
// actor has its own random source, drawn from the seed.
type chaos struct {
	e          *h.Env
	m          *soakModel
	proxy      *faults.Proxy
	rulesFile  string
	namespaces []string
	seed       uint64

	// proxyMu serialises taking the proxy down: random cuts and the cut
	// around a compaction.
	proxyMu sync.Mutex

	// end is when the faults' time is up.
	end time.Time

	mu   sync.Mutex
	errs []error
	// cuts, compactions, reloads and crdCycles count the faults made.
	cuts, compactions, reloads, crdCycles int
	// reloadLists are what each reload listed, and cycled the Frigates
	// the CRD's deletion took: from them and the audit log, soakNeeds
	// counts what the faults needed that lists could not see.
	reloadLists []reloadList
	cycled      crdCycle
	// cutAt are when the cuts began; renamedAt when each generation of
	// the rules after the first was put in place.
	cutAt, renamedAt []time.Time
}

// rng returns actor's random source.
func (c *chaos) rng(actor uint64) *rand.Rand { return rand.New(rand.NewPCG(c.seed, actor)) }

// fail records an actor's error; the test reports them at the end.
func (c *chaos) fail(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	if errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(c.end) {
		return // cut short by the end of the faults
	}
	c.mu.Lock()
	c.errs = append(c.errs, err)
	c.mu.Unlock()
}

// down takes the proxy down and records when.
func (c *chaos) down() {
	c.mu.Lock()
	c.cutAt = append(c.cutAt, time.Now())
	c.mu.Unlock()
	c.proxy.Down()
}

// count adds one to a fault counter.
func (c *chaos) count(n *int) {
	c.mu.Lock()
	*n++
	c.mu.Unlock()
}

// run starts every actor, with a schedule that lasts d, and waits for all.
func (c *chaos) run(ctx context.Context, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	c.end, _ = ctx.Deadline()
	var wg sync.WaitGroup
	wg.Go(func() { c.cutConnections(ctx) })
	wg.Go(func() { c.churn(ctx) })
	for w := range 2 {
		wg.Go(func() { c.writer(ctx, w) })
	}
	wg.Go(func() { c.schedule(ctx, d) })
	wg.Wait()
}

// cutConnections takes the proxy down for 0.3–2 s every 3–8 s: every
// connection of the controller is reset, then refused.
func (c *chaos) cutConnections(ctx context.Context) {
	rng := c.rng(1)
	for sleep(ctx, time.Duration(3000+rng.IntN(5000))*time.Millisecond) {
		c.proxyMu.Lock()
		c.down()
		c.count(&c.cuts)
		sleep(context.Background(), time.Duration(300+rng.IntN(1700))*time.Millisecond)
		c.fail(c.proxy.Up())
		c.proxyMu.Unlock()
	}
}

// churn creates a selected ConfigMap every 50 ms and deletes one every
// 100 ms, in random namespaces.
func (c *chaos) churn(ctx context.Context) {
	rng := c.rng(2)
	for i := 0; sleep(ctx, 50*time.Millisecond); i++ {
		ns := c.namespaces[rng.IntN(len(c.namespaces))]
		ref := soakRef{gvr: h.ConfigMaps, namespace: ns, name: fmt.Sprintf("churn-%d", i)}
		if err := c.m.create(ctx, c.e, ref, true); err != nil {
			c.fail(err)
			continue
		}
		c.m.created.Add(1)
		if i%2 == 0 {
			continue
		}
		victim, ok := c.m.pick(rng.IntN(1<<30), func(r soakRef) bool { return r.gvr == h.ConfigMaps })
		if !ok {
			continue
		}
		c.fail(c.m.remove(ctx, c.e, victim))
		c.m.deleted.Add(1)
	}
}

// writer is the other writer w of two: every 40 ms it changes the foreign
// keys of a random selected object, or, one time in three, tampers with
// the managed key. The two writers write disjoint objects, so that the
// last value each wrote is the one an object must carry.
func (c *chaos) writer(ctx context.Context, w int) {
	rng := c.rng(uint64(10 + w))
	mine := func(r soakRef) bool {
		f := fnv.New32a()
		f.Write([]byte(r.namespace + "/" + r.name))
		return int(f.Sum32()%2) == w
	}
	for i := 1; sleep(ctx, 40*time.Millisecond); i++ {
		ref, ok := c.m.pick(rng.IntN(1<<30), mine)
		if !ok {
			continue
		}
		c.fail(c.m.write(ctx, c.e, ref, i*2+w, rng.IntN(3) == 0))
	}
}

// schedule makes the faults that happen at set points of d: rules
// reloads, compactions of etcd while the controller is cut off, and the
// Frigate CRD deleted and re-created; a random offset of up to 2 s each.
func (c *chaos) schedule(ctx context.Context, d time.Duration) {
	rng := c.rng(3)
	steps := []struct {
		at float64 // fraction of d
		do func(context.Context) error
	}{
		{0.10, c.reload}, {0.20, c.compact}, {0.30, c.reload}, {0.40, c.cycleCRD},
		{0.60, c.reload}, {0.70, c.compact}, {0.85, c.reload},
	}
	start := time.Now()
	for _, s := range steps {
		at := time.Duration(s.at*float64(d)) + time.Duration(rng.IntN(2000))*time.Millisecond
		if !sleep(ctx, at-time.Since(start)) {
			return
		}
		c.fail(s.do(ctx))
	}
}

// reload replaces the rules file by the next generation. Objects that
// carried what the old rules want need one write each; those that did not
// yet still need the one write already counted for them. Objects the
// controller writes as the old rules want after the list need one more:
// the audit log tells which (see reloadList).
func (c *chaos) reload(ctx context.Context) error {
	c.m.mu.Lock()
	c.m.listing, c.m.listTampers = true, nil
	c.m.mu.Unlock()
	defer func() {
		c.m.mu.Lock()
		c.m.listing = false
		c.m.mu.Unlock()
	}()
	listed := time.Now()
	objs, err := c.listAll(ctx)
	if err != nil {
		return err
	}
	gen := c.m.generation()
	next := soakRules(gen + 1)
	tmp := c.rulesFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(next), 0o600); err != nil {
		return err
	}
	return c.replaceRules(tmp, objs, gen, listed)
}

// replaceRules renames tmp, the rules of generation gen+1, over the rules
// file, and counts a needed change for each object of objs, listed from
// listed on, that carries what the rules of generation gen want.
func (c *chaos) replaceRules(tmp string, objs []unstructured.Unstructured, gen int, listed time.Time) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if err := os.Rename(tmp, c.rulesFile); err != nil {
		return err
	}
	c.m.gen = gen + 1
	c.m.needed.Add(int64(converged(objs, gen)))
	c.count(&c.reloads)
	rl := reloadList{gen: gen, listed: listed, renamed: time.Now(), converged: map[string]bool{}}
	for i := range objs {
		if objs[i].GetLabels()[selectLabel] == "yes" && convergedTo(&objs[i], gen) {
			rl.converged[objectKey(&objs[i])] = true
		}
	}
	// A tamper since the list began with an object the list counts needs
	// no write of its own: the one the reload needs restores the key.
	// Else, one write (or, if the controller restores the key as the old
	// rules want, two, of which one goes uncounted).
	for _, key := range c.m.listTampers {
		if !rl.converged[key] {
			c.m.needed.Add(1)
		}
	}
	c.m.listing, c.m.listTampers = false, nil
	c.mu.Lock()
	c.renamedAt = append(c.renamedAt, rl.renamed)
	c.reloadLists = append(c.reloadLists, rl)
	c.mu.Unlock()
	return nil
}

// listAll lists the soak's ConfigMaps and Frigates; none of the latter
// while the CRD is gone.
func (c *chaos) listAll(ctx context.Context) ([]unstructured.Unstructured, error) {
	cms, err := listSoak(ctx, c.e, h.ConfigMaps, c.namespaces)
	if err != nil {
		return nil, err
	}
	frigates, err := listSoak(ctx, c.e, h.Frigates, c.namespaces)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	return append(cms, frigates...), nil
}

// compact cuts the controller off, lets the writers change objects for
// 1.5 s, and compacts etcd at its current revision: the controller's
// watches resume from a revision that is gone (410 Gone) and relist.
func (c *chaos) compact(ctx context.Context) error {
	c.proxyMu.Lock()
	defer c.proxyMu.Unlock()
	c.down()
	defer func() { c.fail(c.proxy.Up()) }()
	if !sleep(ctx, 1500*time.Millisecond) {
		return nil
	}
	rev, err := c.e.EtcdRevision(ctx)
	if err != nil {
		return err
	}
	if err := c.e.CompactEtcd(ctx, rev); err != nil {
		return err
	}
	c.count(&c.compactions)
	c.count(&c.cuts)
	return nil
}

// cycleCRD deletes the Frigate CRD (and so every Frigate), re-creates it,
// and creates as many Frigates as there were, under new names. Frigates
// that did not carry what the rules want when they were deleted will not
// get the write counted for them: soakNeeds gives it back.
func (c *chaos) cycleCRD(ctx context.Context) error {
	frigates, err := listSoak(ctx, c.e, h.Frigates, c.namespaces)
	if err != nil {
		return err
	}
	c.m.mu.Lock()
	cycled := crdCycle{gen: c.m.gen, keys: map[string]bool{}}
	now := time.Now()
	for r := range c.m.live {
		if r.gvr == h.Frigates {
			cycled.keys[r.key()] = true
			c.m.removedAt[r.key()] = now
			delete(c.m.live, r)
		}
	}
	c.m.mu.Unlock()
	c.mu.Lock()
	c.cycled = cycled
	c.mu.Unlock()
	const crd = "frigates.ship.nwiizo.dev"
	if err := c.e.Dynamic.Resource(h.CRDs).Delete(ctx, crd, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete CRD: %w", err)
	}
	if err := waitCRDGone(ctx, c.e, crd); err != nil {
		return err
	}
	data, err := os.ReadFile(h.CRDFile())
	if err != nil {
		return err
	}
	crdObj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crdObj.Object); err != nil {
		return err
	}
	if _, err := c.e.Dynamic.Resource(h.CRDs).Create(ctx, crdObj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("re-create CRD: %w", err)
	}
	c.count(&c.crdCycles)
	for i := range frigates {
		ns := c.namespaces[i%len(c.namespaces)]
		ref := soakRef{gvr: h.Frigates, namespace: ns, name: fmt.Sprintf("f2-%d", i)}
		// A CRD just created is served after a moment: retry NotFound.
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err := c.m.create(ctx, c.e, ref, true)
			return err == nil, ignoreNotFound(err)
		})
		if err != nil {
			return err
		}
		c.m.created.Add(1)
	}
	return nil
}

// waitCRDGone waits until the CRD named name, and with it its objects, is
// deleted.
func waitCRDGone(ctx context.Context, e *h.Env, name string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := e.Dynamic.Resource(h.CRDs).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
}

// ignoreNotFound returns nil for a NotFound error, else err.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return ctx.Err() == nil
	}
}

// rulesFileFor writes generation 0 of the rules into dir.
func rulesFileFor(dir string) (string, error) {
	path := filepath.Join(dir, "rules.yaml")
	return path, os.WriteFile(path, []byte(soakRules(0)), 0o600)
}
