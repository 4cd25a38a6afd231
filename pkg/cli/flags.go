package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// outputFormats are the values of -o/--output besides "" (text).
var outputFormats = []cobra.Completion{"json", "yaml"}

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

// encode writes v to w as output says, json or yaml.
func encode(w io.Writer, output string, v any) error {
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
