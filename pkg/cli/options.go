package cli

import (
	"cmp"
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kube-annotator/kube-annotator/pkg/cli/logs"
)

// options are a command's flags and arguments, as kubectl's commands hold
// them (NewCmdX over an XOptions): completed from the command line,
// validated once, then run.
type options interface {
	// complete works out what the flags and arguments leave open:
	// defaults that depend on other flags, the object the arguments name.
	complete(c *cobra.Command, args []string) error
	// validate reports, naming the flag, the first value that cannot be
	// used. It changes nothing.
	validate() error
	// run does the command's work.
	run(ctx context.Context) error
}

// runE is the RunE of every command that ends by itself: o completed and
// validated (an error is a usage error, said before anything is done),
// then run with the logs of such a command (logs.Setup).
func (e *env) runE(o options) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if err := completeAndValidate(o, c, args); err != nil {
			return err
		}
		ctx, restore := logs.Setup(c.Context(), e.Err, c.Flags())
		defer restore()
		return o.run(ctx)
	}
}

// completeAndValidate completes o from c's flags and args and validates
// it; what cannot be used is a usage error.
func completeAndValidate(o options, c *cobra.Command, args []string) error {
	if err := o.complete(c, args); err != nil {
		return usageError{err}
	}
	if err := o.validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// commonFlags are the flags the commands share, each added by the command
// that takes it, in the order its help lists them: --rules, -o/--output,
// --offline and --crd, the connection flags, --exclude-namespaces,
// -A/--all-namespaces, then -v and --vmodule.
type commonFlags struct {
	// fs is the command's flag set.
	fs *pflag.FlagSet
	// rulesPath is --rules; hasRules says whether the command takes it.
	rulesPath string
	hasRules  bool
	// output is -o/--output; hasOutput says whether the command takes it.
	output    string
	hasOutput bool
	// offline is --offline and --crd, for the commands that take them.
	offline *offlineFlags
	// cluster are the connection flags, for the commands that talk to a
	// cluster.
	cluster *clusterFlags
}

// addRules adds --rules, the rules file, completed with YAML files, and
// returns c's flag set for the command's own flags.
func (o *commonFlags) addRules(c *cobra.Command) *pflag.FlagSet {
	o.fs, o.hasRules = newFlags(c), true
	o.fs.StringVar(&o.rulesPath, "rules", defaultRules, "Path to the rules file")
	_ = c.MarkFlagFilename("rules", "yaml", "yml") // the flag exists
	return o.fs
}

// addOutput adds -o/--output, text or json or yaml.
func (o *commonFlags) addOutput(c *cobra.Command) {
	o.fs, o.hasOutput = newFlags(c), true
	o.fs.StringVarP(&o.output, "output", "o", "", "Output format: \"\" (text), json or yaml")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp)) // the flag exists
}

// addOffline adds --offline, which usage describes, and --crd: names are
// then resolved with no cluster when --offline is given.
func (o *commonFlags) addOffline(c *cobra.Command, usage string) {
	o.offline = addOfflineFlags(c, usage)
}

// clusterScope says which of the flags that scope a command to namespaces
// it takes besides -n: --exclude-namespaces, for the commands that apply
// rules to objects; -A/--all-namespaces, whose usage says what the command
// does without -n ("": no -A).
type clusterScope struct {
	exclude       bool
	allNamespaces string
}

// addCluster adds the connection flags, whose requests time out after
// requestTimeout unless --request-timeout says otherwise, the scope's
// flags, and the log flags, last.
func (o *commonFlags) addCluster(c *cobra.Command, requestTimeout string, scope clusterScope) {
	o.cluster = addClusterFlags(c, requestTimeout)
	o.cluster.offline = o.offline
	o.fs = newFlags(c)
	if scope.exclude {
		o.cluster.addExcludeFlag(o.fs)
	}
	if scope.allNamespaces != "" {
		o.cluster.addAllNamespacesFlag(o.fs, scope.allNamespaces)
	}
	logs.AddFlags(o.fs)
}

// validate reports, naming the flag, the first value that cannot be used:
// -o's, then the command's own (own, in order), the connection flags',
// and a default --rules that names no file.
func (o *commonFlags) validate(own ...error) error {
	errs := make([]error, 0, len(own)+3)
	if o.hasOutput {
		errs = append(errs, validateOutput(o.output))
	}
	errs = append(errs, own...)
	if o.cluster != nil {
		errs = append(errs, o.cluster.validate())
	}
	if o.hasRules {
		errs = append(errs, defaultRulesExist(o.fs))
	}
	return cmp.Or(errs...)
}
