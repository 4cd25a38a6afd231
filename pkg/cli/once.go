package cli

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"text/tabwriter"

	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
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

func onceCommand(ctx context.Context, e *env, args []string) int {
	fs := e.newFlagSet("once", "Converge every object the rules name once, then exit: 0 when everything converged.")
	rulesPath := fs.String("rules", "rules.yaml", "Path to the rules file")
	workers := fs.Int("workers", 8, "Number of objects patched in parallel")
	cf := addClusterFlags(fs)
	cf.addExcludeFlag(fs)
	addLogFlags(fs)
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if *workers < 1 {
		fmt.Fprintf(e.Err, "%s once: --workers must be at least 1, got %d\n", e.prog, *workers)
		return 2
	}
	ctx = klog.NewContext(ctx, klog.Background().WithName("kube-annotator"))
	s, err := connect(ctx, *rulesPath, cf)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}

	var tallies []*tally
	for _, u := range s.unresolved {
		tallies = append(tallies, &tally{resource: u.Field, note: u.Message})
	}
	prog := newProgress(e.Err)
	failed := len(s.unresolved) > 0
	for _, t := range s.set.SortedTargets() {
		tl := &tally{resource: rules.GVRString(t.GVR)}
		tallies = append(tallies, tl)
		stop := prog.track(tl)
		err := converge(ctx, s, t, cf.namespace(), *workers, tl)
		stop()
		if err != nil {
			tl.note = err.Error()
			failed = true
		}
		if tl.errors.Load() > 0 {
			failed = true
		}
	}
	printSummary(e, tallies)
	if failed || ctx.Err() != nil {
		return 1
	}
	return 0
}

// converge lists every object of t and patches those that differ, with
// workers in parallel. An object deleted before its patch is neither
// changed nor an error.
func converge(ctx context.Context, s *session, t *rules.Target, namespace string, workers int, tl *tally) error {
	logger := klog.FromContext(ctx)
	w := reconcile.NewWriter(s.metadata, reconcile.FieldManager, nil)
	jobs := make(chan *scan.Object)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for o := range jobs {
				res, err := w.Send(ctx, reconcile.Ref{GVR: t.GVR, Namespace: o.Namespace, Name: o.Name}, o.Requests)
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
	err := scan.Resource(ctx, s.dynamic, t, namespace, reconcile.FieldManager, s.nsLabels, func(_ *rules.Target, pending *scan.Object) error {
		tl.examined.Add(1)
		if pending != nil {
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
	return err
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
