package converge

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// Converger converges the objects of one resource after another, as one
// field manager.
type Converger struct {
	// Dynamic lists the objects; Writer sends their changes.
	Dynamic dynamic.Interface
	Writer  *reconcile.Writer
	// Manager is the field manager Writer writes as; Namespace limits the
	// objects to one namespace ("" for all).
	Manager, Namespace string
	// Workers is how many objects are patched in parallel.
	Workers int
	// Look finds the objects the rules read besides the objects ruled;
	// Unset counts the keys the rules could not compute.
	Look  source.Lookup
	Unset *scan.Unset
	// Progress reports on each resource as it is converged.
	Progress *Progress
}

// Converge lists every object of t and patches those that differ, with
// Workers in parallel, and returns what it did; its note says why it
// stopped early. An object deleted before its patch is neither changed
// nor an error.
func (cv *Converger) Converge(ctx context.Context, t *rules.Target) *Tally {
	logger := klog.FromContext(ctx)
	tl := &Tally{Resource: source.GVRString(t.GVR)}
	defer cv.Progress.track(tl)()
	jobs := make(chan *scan.Object)
	var wg sync.WaitGroup
	for range cv.Workers {
		wg.Go(func() {
			for o := range jobs {
				res, err := cv.Writer.Send(ctx, reconcile.Ref{GVR: t.GVR, Namespace: o.Namespace, Name: o.Name}, o.Requests)
				switch {
				case err != nil:
					tl.errors.Add(1)
					logger.Error(err, "Patch failed", "resource", o.Resource, "object", klog.KRef(o.Namespace, o.Name))
				case !res.Gone:
					tl.changed.Add(1)
				}
			}
		})
	}
	err := scan.Resource(ctx, cv.Dynamic, t, cv.Namespace, cv.Manager, cv.Look, cv.Unset, func(_ *rules.Target, pending *scan.Object) error {
		tl.examined.Add(1)
		if pending != nil && len(pending.Requests) > 0 {
			select {
			case jobs <- pending:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	close(jobs)
	wg.Wait()
	if err != nil {
		tl.Note = err.Error()
	}
	return tl
}

// All converges every target of set, then prunes the resources rec lists
// that no rule of set names (Prune), and returns what it did, first the
// resources of the rules file that are not served (unresolved), and
// whether any failed.
func (cv *Converger) All(ctx context.Context, set *rules.Set, unresolved []rulefile.FieldError, rec *record.Record, resolve func(schema.GroupResource) (source.Resource, error)) (tallies []*Tally, failed bool) {
	for _, u := range unresolved {
		tallies = append(tallies, &Tally{Resource: u.Field, Note: u.Message})
	}
	failed = len(unresolved) > 0
	for _, t := range set.SortedTargets() {
		tl := cv.Converge(ctx, t)
		tallies = append(tallies, tl)
		failed = failed || tl.Failed()
	}
	pruned, prunesFailed := cv.Prune(ctx, rec, set, resolve)
	return append(tallies, pruned...), failed || prunesFailed
}

// Prune converges the resources rec lists that no rule of set names,
// resolved by resolve, removing each from the record once its keys are
// gone, and says what it did and whether any failed. Those the server
// does not serve wait in the record.
func (cv *Converger) Prune(ctx context.Context, rec *record.Record, set *rules.Set, resolve func(schema.GroupResource) (source.Resource, error)) (tallies []*Tally, failed bool) {
	prunes, unserved := PruneTargets(rec, set, resolve)
	for _, u := range unserved {
		tallies = append(tallies, &Tally{Resource: u.Resource.String(), Note: fmt.Sprintf("no rule names it; not pruned, kept in the record: %v", u.Err)})
		failed = true
	}
	for _, t := range prunes {
		tl := cv.Converge(ctx, t)
		tallies = append(tallies, tl)
		switch {
		case tl.Failed():
			failed = true
		case ctx.Err() == nil:
			tl.Note = "no rule names it: pruned and removed from the record"
			if err := rec.Remove(ctx, t.GVR.GroupResource()); err != nil {
				tl.Note, failed = err.Error(), true
			}
		}
	}
	return tallies, failed
}

// Unserved is a recorded resource to prune that the server does not
// serve.
type Unserved struct {
	Resource schema.GroupResource
	Err      error
}

// PruneTargets returns, for once and diff, the targets that prune the
// resources rec lists and no rule of set names, and those that resolve
// cannot resolve, which wait in the record.
func PruneTargets(rec *record.Record, set *rules.Set, resolve func(schema.GroupResource) (source.Resource, error)) ([]*rules.Target, []Unserved) {
	var targets []*rules.Target
	var unserved []Unserved
	for _, gr := range reconcile.ToPrune(rec.Recorded(), set) {
		r, err := resolve(gr)
		if err != nil {
			unserved = append(unserved, Unserved{gr, err})
			continue
		}
		targets = append(targets, reconcile.Prune(r))
	}
	return targets, unserved
}
