package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kube-annotator/kube-annotator/pkg/coverage"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// coverageOptions are coverage's flags.
type coverageOptions struct {
	*env
	commonFlags
	manager string
	states  []string
}

func (e *env) newCoverageCommand() *cobra.Command {
	o := &coverageOptions{env: e}
	c := &cobra.Command{
		Use: "coverage", Args: noArgs, Example: "  kube-annotator coverage -A\n  kube-annotator coverage --state source-missing -n tools",
		Short: "Count the objects on which each rule's keys are compliant, pending, or why not",
		Long: "Count, for each rule and key, the objects on which the key is in each state, as run would find them: " + strings.Join(reconcile.States, ", ") +
			".\n--state lists the objects in a state, with the reason explain gives.\nExit status: 0 every key compliant, foreign, opted-out or unrecorded; 3 otherwise; 1 an error; 2 bad usage.",
	}
	fs := o.addRules(c)
	o.addOutput(c)
	fs.StringSliceVar(&o.states, "state", nil, "List the objects whose keys are in these states, with why")
	_ = c.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(reconcile.States, cobra.ShellCompDirectiveNoFileComp)) // the flag exists
	fieldManagerVar(fs, &o.manager)
	o.addCluster(c, terminalRequestTimeout, clusterScope{exclude: true,
		allNamespaces: "Count every namespace apart; without it and -n, the counts are the whole cluster's"})
	c.RunE = e.runE(o)
	return c
}

func (o *coverageOptions) complete(*cobra.Command, []string) error { return nil }

func (o *coverageOptions) validate() error {
	if err := coverage.CheckStates(o.states); err != nil {
		return fmt.Errorf("--state %w", err)
	}
	return o.commonFlags.validate(validateFieldManager(o.manager))
}

// run prints the counts, or the objects in the states asked for, as text
// or as -o says; it exits 3 when a key is left to do or to fix.
func (o *coverageOptions) run(ctx context.Context) error {
	s, err := connect(ctx, o.rulesPath, o.cluster)
	if err != nil {
		return err
	}
	for _, u := range s.unresolved {
		fmt.Fprintf(o.Err, "warning: %s: %s: %s; run would skip it\n", s.path, u.Field, u.Message)
	}
	ns := o.cluster.namespace()
	examined, done := coverage.Progress(o.Err)
	r, err := coverage.Scan(ctx, s.dynamic, s.set.SortedTargets(), coverage.Options{Namespace: ns, ByNamespace: ns != "" || o.cluster.allNamespaces,
		States: o.states, Manager: o.manager, Look: s.look, Examined: examined}, &s.unset)
	if done(); err == nil && o.output != "" {
		err = encode(o.Out, o.output, r)
	} else if err == nil {
		err = coverage.Print(o.Out, r, len(o.states) > 0)
	}
	if err == nil && !r.Covered {
		return exitCode(3)
	}
	return err
}
