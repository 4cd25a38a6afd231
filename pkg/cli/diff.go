package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kube-annotator/kube-annotator/pkg/app"
	"github.com/kube-annotator/kube-annotator/pkg/converge"
	"github.com/kube-annotator/kube-annotator/pkg/diff"
)

// Exit codes of diff, as kubectl diff's: 0 nothing to change, 1 changes
// pending, 2 an error.
const (
	diffPending = 1
	diffFailed  = 2
)

// diffOptions are diff's flags.
type diffOptions struct {
	*env
	commonFlags
	record app.RecordConfig
}

func (e *env) newDiffCommand() *cobra.Command {
	o := &diffOptions{env: e}
	c := &cobra.Command{
		Use:   "diff",
		Short: "Show what run would change, without writing",
		Long: "Show what run would change, object by object, without writing anything: keys to set and to delete,\n" +
			"on the ruled resources and on the recorded ones no rule names (the record is read, never written).\n" +
			"Exit status: 0 nothing to change, 1 changes pending, 2 an error.",
		Args: noArgs,
	}
	fs := o.addRules(c)
	o.addOutput(c)
	addRecordVars(fs, &o.record)
	o.addCluster(c, terminalRequestTimeout, clusterScope{exclude: true,
		allNamespaces: "Show the changes in every namespace: what diff does without -n, whatever the kubeconfig context's namespace"})
	c.RunE = e.runE(o)
	return c
}

func (o *diffOptions) complete(*cobra.Command, []string) error { return nil }

func (o *diffOptions) validate() error { return o.commonFlags.validate(validateRecord(o.record)) }

// run prints what run would change under the rules file, in -o's format.
func (o *diffOptions) run(ctx context.Context) error {
	s, err := connect(ctx, o.rulesPath, o.cluster)
	if err != nil {
		return &exitError{diffFailed, err}
	}
	for _, u := range s.unresolved {
		fmt.Fprintf(o.Err, "warning: %s: %s: %s; run would skip it\n", s.path, u.Field, u.Message)
	}
	rec, err := loadRecord(ctx, s.cfg, &o.record, o.cluster.namespace())
	if err != nil {
		return &exitError{diffFailed, err}
	}
	prunes, unserved := converge.PruneTargets(rec, s.set, s.resolver.ResolveGroupResource)
	for _, u := range unserved {
		fmt.Fprintf(o.Err, "warning: record %s lists %s, which no rule names: %v; run would keep it in the record until it is served\n", rec.Ref(), u.Resource, u.Err)
	}
	targets := append(s.set.SortedTargets(), prunes...)
	pending, audited, err := diff.Changes(ctx, s.dynamic, targets, o.cluster.namespace(), o.record.FieldManager, s.look, &s.unset)
	if err != nil {
		return &exitError{diffFailed, err}
	}
	if o.output != "" {
		err = encode(o.Out, o.output, pending)
	} else {
		diff.Print(o.Out, pending)
	}
	if err != nil {
		return &exitError{diffFailed, err}
	}
	for _, line := range diff.Summary(pending, audited) {
		fmt.Fprintln(o.Err, line)
	}
	s.warnUnset(o.env)
	if len(pending) > 0 {
		return exitCode(diffPending)
	}
	return nil
}
