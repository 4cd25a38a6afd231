package cli

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// Exit codes of diff, as kubectl diff's: 0 nothing to change, 1 changes
// pending, 2 an error.
const (
	diffPending = 1
	diffFailed  = 2
)

func diffCommand(ctx context.Context, e *env, args []string) error {
	fs := e.newFlagSet("diff", "Show what run would change, object by object, without writing anything: keys to set and to delete,\n"+
		"on the ruled resources and on the recorded ones no rule names (the record is read, never written).\n"+
		"Exit status: 0 nothing to change, 1 changes pending, 2 an error.")
	rulesPath := fs.String("rules", "rules.yaml", "Path to the rules file")
	output := fs.StringP("output", "o", "", "Output format: \"\" (text), json or yaml")
	rf := addRecordFlags(fs)
	cf := addClusterFlags(fs, terminalRequestTimeout)
	cf.addExcludeFlag(fs)
	addLogFlags(fs)
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *output != "" && *output != "json" && *output != "yaml" {
		return usageErrorf("--output must be json or yaml, got %q", *output)
	}
	if err := cmp.Or(rf.Validate(), cf.validate()); err != nil {
		return usageError{err}
	}
	ctx, restore := e.logging(ctx, fs)
	defer restore()
	s, err := connect(ctx, *rulesPath, cf)
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
	if err := printDiff(e, *output, pending); err != nil {
		return &exitError{diffFailed, err}
	}
	for _, line := range ruleSummary(pending, audited) {
		fmt.Fprintln(e.Err, line)
	}
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
		err := scan.Resource(ctx, s.dynamic, t, namespace, manager, s.nsLabels, s.nsIgnored, func(_ *rules.Target, o *scan.Object) error {
			if o != nil && len(o.Changes) > 0 {
				pending = append(pending, o)
			}
			if o != nil && len(o.Audit) > 0 {
				audited = append(audited, o)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("list %s: %w", rules.GVRString(t.GVR), err)
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
