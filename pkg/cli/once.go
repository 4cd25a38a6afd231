package cli

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/app"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// tally counts what `once` did to one resource.
type tally struct {
	resource string
	examined atomic.Int64
	changed  atomic.Int64
	errors   atomic.Int64
	note     string // why the resource was not processed, if it was not
}

func (e *env) newOnceCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "once",
		Short: "Converge every ruled object once, then exit",
		Long: "Converge every object the rules name once, then exit: 0 when everything converged.\n" +
			"Keys set on recorded resources that no rule names any more are deleted too, as run does.",
		Args: noArgs,
	}
	rulesPath := addRulesFlag(c)
	fs := newFlags(c)
	workers := fs.Int("workers", 8, "Number of objects patched in parallel")
	rf := addRecordFlags(fs)
	cf := addClusterFlags(c, terminalRequestTimeout)
	cf.addExcludeFlag(fs)
	cf.addAllNamespacesFlag(fs, "Converge the objects of every namespace: what once does without -n, whatever the kubeconfig context's namespace")
	addLogFlags(fs)
	c.RunE = func(c *cobra.Command, _ []string) error {
		if *workers < 1 {
			return usageErrorf("--workers must be at least 1, got %d", *workers)
		}
		if err := cmp.Or(rf.Validate(), cf.validate(), defaultRulesExist(fs)); err != nil {
			return usageError{err}
		}
		ctx, restore := e.logging(c.Context(), fs)
		defer restore()
		return e.once(ctx, *rulesPath, *workers, rf, cf)
	}
	return c
}

// once converges every object the rules file at path names, with workers
// in parallel.
func (e *env) once(ctx context.Context, path string, workers int, rf *app.RecordConfig, cf *clusterFlags) error {
	s, err := connect(ctx, path, cf)
	if err != nil {
		return err
	}
	rec, err := loadRecord(ctx, s.cfg, rf, cf.namespace())
	if err != nil {
		return err
	}
	cv := &converger{session: s, writer: reconcile.NewWriter(s.metadata, rf.FieldManager, rec, nil),
		manager: rf.FieldManager, namespace: cf.namespace(), workers: workers, progress: newProgress(e.Err)}

	var tallies []*tally
	for _, u := range s.unresolved {
		tallies = append(tallies, &tally{resource: u.Field, note: u.Message})
	}
	failed := len(s.unresolved) > 0
	for _, t := range s.set.SortedTargets() {
		tl := cv.converge(ctx, t)
		tallies = append(tallies, tl)
		failed = failed || tl.failed()
	}
	pruned, prunesFailed := cv.prune(ctx, rec)
	printSummary(e, append(tallies, pruned...))
	s.warnUnset(e)
	if failed || prunesFailed || ctx.Err() != nil {
		return exitCode(1) // the summary says what failed
	}
	return nil
}

// prune converges the resources rec lists that no rule names, removing
// each from the record once its keys are gone, and says what it did and
// whether any failed. Those the server does not serve wait in the record.
func (cv *converger) prune(ctx context.Context, rec *record.Record) (tallies []*tally, failed bool) {
	s := cv.session
	prunes, unserved := pruneTargets(rec, s.set, s.resolver.ResolveGroupResource)
	for _, u := range unserved {
		tallies = append(tallies, &tally{resource: u.resource.String(), note: fmt.Sprintf("no rule names it; not pruned, kept in the record: %v", u.err)})
		failed = true
	}
	for _, t := range prunes {
		tl := cv.converge(ctx, t)
		tallies = append(tallies, tl)
		switch {
		case tl.failed():
			failed = true
		case ctx.Err() == nil:
			tl.note = "no rule names it: pruned and removed from the record"
			if err := rec.Remove(ctx, t.GVR.GroupResource()); err != nil {
				tl.note, failed = err.Error(), true
			}
		}
	}
	return tallies, failed
}

// failed reports whether the resource could not be converged.
func (tl *tally) failed() bool { return tl.note != "" || tl.errors.Load() > 0 }

// converger converges the objects of one resource after another, as one
// field manager.
type converger struct {
	session            *session
	writer             *reconcile.Writer
	manager, namespace string
	workers            int
	progress           *progress
}

// converge lists every object of t and patches those that differ, with
// workers in parallel, and returns what it did; its note says why it
// stopped early. An object deleted before its patch is neither changed
// nor an error.
func (cv *converger) converge(ctx context.Context, t *rules.Target) *tally {
	logger := klog.FromContext(ctx)
	tl := &tally{resource: source.GVRString(t.GVR)}
	defer cv.progress.track(tl)()
	jobs := make(chan *scan.Object)
	var wg sync.WaitGroup
	for range cv.workers {
		wg.Go(func() {
			for o := range jobs {
				res, err := cv.writer.Send(ctx, reconcile.Ref{GVR: t.GVR, Namespace: o.Namespace, Name: o.Name}, o.Requests)
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
	s := cv.session
	err := scan.Resource(ctx, s.dynamic, t, cv.namespace, cv.manager, s.look, &s.unset, func(_ *rules.Target, pending *scan.Object) error {
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
		tl.note = err.Error()
	}
	return tl
}

func printSummary(e *env, tallies []*tally) {
	w := tabwriter.NewWriter(e.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RESOURCE\tEXAMINED\tCHANGED\tERRORS\tNOTE")
	var ex, ch, er int64
	for _, t := range tallies {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\n", t.resource, t.examined.Load(), t.changed.Load(), t.errors.Load(), t.note)
		ex, ch, er = ex+t.examined.Load(), ch+t.changed.Load(), er+t.errors.Load()
	}
	fmt.Fprintf(w, "TOTAL\t%d\t%d\t%d\t\n", ex, ch, er)
	_ = w.Flush()
}
