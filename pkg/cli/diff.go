package cli

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kube-annotator/kube-annotator/pkg/app"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// Exit codes of diff, as kubectl diff's: 0 nothing to change, 1 changes
// pending, 2 an error.
const (
	diffPending = 1
	diffFailed  = 2
)

func (e *env) newDiffCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "diff",
		Short: "Show what run would change, without writing",
		Long: "Show what run would change, object by object, without writing anything: keys to set and to delete,\n" +
			"on the ruled resources and on the recorded ones no rule names (the record is read, never written).\n" +
			"Exit status: 0 nothing to change, 1 changes pending, 2 an error.",
		Args: noArgs,
	}
	rulesPath := addRulesFlag(c)
	fs := newFlags(c)
	output := addOutputFlag(c)
	rf := addRecordFlags(fs)
	cf := addClusterFlags(c, terminalRequestTimeout)
	cf.addExcludeFlag(fs)
	cf.addAllNamespacesFlag(fs, "Show the changes in every namespace: what diff does without -n, whatever the kubeconfig context's namespace")
	addLogFlags(fs)
	c.RunE = func(c *cobra.Command, _ []string) error {
		if err := cmp.Or(validateOutput(*output), rf.Validate(), cf.validate(), defaultRulesExist(fs)); err != nil {
			return usageError{err}
		}
		ctx, restore := e.logging(c.Context(), fs)
		defer restore()
		return e.diff(ctx, *rulesPath, *output, rf, cf)
	}
	return c
}

// diff prints what run would change under the rules file at path, in
// output's format.
func (e *env) diff(ctx context.Context, path, output string, rf *app.RecordConfig, cf *clusterFlags) error {
	s, err := connect(ctx, path, cf)
	if err != nil {
		return &exitError{diffFailed, err}
	}
	for _, u := range s.unresolved {
		fmt.Fprintf(e.Err, "warning: %s: %s: %s; run would skip it\n", s.path, u.Field, u.Message)
	}
	rec, err := loadRecord(ctx, s.cfg, rf, cf.namespace())
	if err != nil {
		return &exitError{diffFailed, err}
	}
	prunes, unserved := pruneTargets(rec, s.set, s.resolver.ResolveGroupResource)
	for _, u := range unserved {
		fmt.Fprintf(e.Err, "warning: record %s lists %s, which no rule names: %v; run would keep it in the record until it is served\n", rec.Ref(), u.resource, u.err)
	}

	pending, audited, err := s.changes(ctx, append(s.set.SortedTargets(), prunes...), cf.namespace(), rf.FieldManager)
	if err != nil {
		return &exitError{diffFailed, err}
	}
	if err := printDiff(e, output, pending); err != nil {
		return &exitError{diffFailed, err}
	}
	for _, line := range ruleSummary(pending, audited) {
		fmt.Fprintln(e.Err, line)
	}
	s.warnUnset(e)
	if len(pending) > 0 {
		return exitCode(diffPending)
	}
	return nil
}

// changes lists the objects of targets in namespace ("" for all) and
// returns those that run, writing as manager, would change, and those that
// rules in audit mode would.
func (s *session) changes(ctx context.Context, targets []*rules.Target, namespace, manager string) (pending, audited []*scan.Object, err error) {
	pending, audited = []*scan.Object{}, []*scan.Object{}
	for _, t := range targets {
		err := scan.Resource(ctx, s.dynamic, t, namespace, manager, s.look, &s.unset, func(_ *rules.Target, o *scan.Object) error {
			if o != nil && len(o.Changes) > 0 {
				pending = append(pending, o)
			}
			if o != nil && len(o.Audit) > 0 {
				audited = append(audited, o)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("list %s: %w", source.GVRString(t.GVR), err)
		}
	}
	return pending, audited, nil
}

func printDiff(e *env, output string, pending []*scan.Object) error {
	if output != "" {
		return encode(e.Out, output, pending)
	}
	for _, o := range pending {
		ref := o.Name
		if o.Namespace != "" {
			ref = o.Namespace + "/" + o.Name
		}
		fmt.Fprintf(e.Out, "%s %s\n", o.Resource, ref)
		for _, c := range o.Changes {
			kind := ""
			if c.Kind == "label" {
				kind = "label "
			}
			fmt.Fprintf(e.Out, "  %s%s: %s → %s\n", kind, c.Key, quoted(c.Old), quoted(c.New))
		}
	}
	return nil
}

// quoted is a value for diff's text output; <none> for a missing key.
func quoted(v *string) string {
	if v == nil {
		return "<none>"
	}
	return strconv.Quote(*v)
}
