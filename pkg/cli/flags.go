package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// outputFormats are the values of -o/--output besides "" (text).
var outputFormats = []cobra.Completion{"json", "yaml"}

// addOutputFlag adds -o/--output, text or json or yaml, to c.
func addOutputFlag(c *cobra.Command) *string {
	p := newFlags(c).StringP("output", "o", "", "Output format: \"\" (text), json or yaml")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp)) // the flag exists
	return p
}

// validateOutput reports an -o/--output that is neither text, json nor
// yaml.
func validateOutput(output string) error {
	if output != "" && output != "json" && output != "yaml" {
		return fmt.Errorf("--output must be json or yaml, got %q", output)
	}
	return nil
}

// defaultRulesExist reports, when fs's --rules is left at its default, a
// ./rules.yaml that does not exist: the user most likely meant to name
// another file.
func defaultRulesExist(fs *pflag.FlagSet) error {
	if fs.Changed("rules") {
		return nil
	}
	if _, err := os.Stat(defaultRules); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no %s here: --rules defaults to ./%s; name the rules file with --rules FILE", defaultRules, defaultRules)
	}
	return nil
}
