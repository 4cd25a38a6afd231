package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kube-annotator/kube-annotator/pkg/app"
	"github.com/kube-annotator/kube-annotator/pkg/converge"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// onceOptions are once's flags.
type onceOptions struct {
	*env
	commonFlags
	workers int
	record  app.RecordConfig
}

func (e *env) newOnceCommand() *cobra.Command {
	o := &onceOptions{env: e}
	c := &cobra.Command{
		Use:   "once",
		Short: "Converge every ruled object once, then exit",
		Long: "Converge every object the rules name once, then exit: 0 when everything converged.\n" +
			"Keys set on recorded resources that no rule names any more are deleted too, as run does.",
		Args: noArgs,
	}
	fs := o.addRules(c)
	fs.IntVar(&o.workers, "workers", 8, "Number of objects patched in parallel")
	addRecordVars(fs, &o.record)
	o.addCluster(c, terminalRequestTimeout, clusterScope{exclude: true,
		allNamespaces: "Converge the objects of every namespace: what once does without -n, whatever the kubeconfig context's namespace"})
	c.RunE = e.runE(o)
	return c
}

func (o *onceOptions) complete(*cobra.Command, []string) error { return nil }

func (o *onceOptions) validate() error {
	var workers error
	if o.workers < 1 {
		workers = fmt.Errorf("--workers must be at least 1, got %d", o.workers)
	}
	return o.commonFlags.validate(workers, validateRecord(o.record))
}

// run converges every object the rules file names, with workers in
// parallel.
func (o *onceOptions) run(ctx context.Context) error {
	s, err := connect(ctx, o.rulesPath, o.cluster)
	if err != nil {
		return err
	}
	ns := o.cluster.namespace()
	rec, err := loadRecord(ctx, s.cfg, &o.record, ns)
	if err != nil {
		return err
	}
	cv := &converge.Converger{Dynamic: s.dynamic, Writer: reconcile.NewWriter(s.metadata, o.record.FieldManager, rec, nil),
		Manager: o.record.FieldManager, Namespace: ns, Workers: o.workers, Look: s.look, Unset: &s.unset, Progress: converge.NewProgress(o.Err)}
	tallies, failed := cv.All(ctx, s.set, s.unresolved, rec, s.resolver.ResolveGroupResource)
	converge.PrintSummary(o.Out, tallies)
	s.warnUnset(o.env)
	if failed || ctx.Err() != nil {
		return exitCode(1) // the summary says what failed
	}
	return nil
}
