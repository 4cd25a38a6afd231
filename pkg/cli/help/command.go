package help

import (
	"strings"

	"github.com/spf13/cobra"
)

// NewCommand returns "help [COMMAND]": print COMMAND's help, and the error
// unknown returns for a command that does not exist under the root.
func NewCommand(print func(*cobra.Command), unknown func(root *cobra.Command, args []string) error) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "Print the help of a command",
		Args:  cobra.ArbitraryArgs,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range c.Root().Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 && cmd == c.Root() {
				return unknown(c.Root(), args)
			}
			print(cmd)
			return nil
		},
	}
}
