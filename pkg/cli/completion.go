package cli

import (
	"github.com/spf13/cobra"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kube-annotator/kube-annotator/pkg/cli/logs"
	"github.com/kube-annotator/kube-annotator/pkg/completion"
)

// addCompletionCommand adds cobra's completion command to root: its bash,
// zsh, fish and powershell subcommands print scripts that call
// "__complete"; the command itself, without a known shell, is a usage
// error.
func (e *env) addCompletionCommand(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Short = "Print the shell completion script for bash, zsh, fish or powershell"
		c.Long = "Print the script that completes " + e.prog + "'s commands, flags and arguments in a shell;\n" +
			"resource, object, namespace and context names are completed from the cluster and the kubeconfig.\n" +
			"As a kubectl plugin, kubectl completes 'kubectl annotator' through kubectl_complete-annotator instead."
		c.Example = "  source <(kube-annotator completion bash)\n  kube-annotator completion zsh > \"${fpath[1]}/_kube-annotator\""
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("name a shell: bash, zsh, fish or powershell")
			}
			return usageErrorf("unknown shell %q: bash, zsh, fish or powershell", args[0])
		}
	}
}

// registerCompletions completes c's connection flags: namespaces from the
// cluster, contexts, clusters and users from the kubeconfig.
func (f *clusterFlags) registerCompletions(c *cobra.Command) {
	fromKubeconfig := func(names func(clientcmdapi.Config) []string) cobra.CompletionFunc {
		return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			raw, _ := f.kube.RawKubeconfig()
			return completion.WithPrefix(names(raw), toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	for flag, fn := range map[string]cobra.CompletionFunc{
		"namespace": func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return f.completer().Namespaces(toComplete), cobra.ShellCompDirectiveNoFileComp
		},
		"context": fromKubeconfig(func(r clientcmdapi.Config) []string { return completion.Keys(r.Contexts) }),
		"cluster": fromKubeconfig(func(r clientcmdapi.Config) []string { return completion.Keys(r.Clusters) }),
		"user":    fromKubeconfig(func(r clientcmdapi.Config) []string { return completion.Keys(r.AuthInfos) }),
	} {
		_ = c.RegisterFlagCompletionFunc(flag, fn) // the flags exist, once each
	}
}

// completeObject completes explain's arguments: a resource, then the
// names of its objects in the namespace (-n, else the kubeconfig
// context's; every namespace with -A).
func (f *clusterFlags) completeObject(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	namespace := func() (string, error) {
		if f.allNamespaces {
			return "", nil
		}
		return f.kube.DefaultNamespace()
	}
	return f.completer().Object(args, toComplete, namespace), cobra.ShellCompDirectiveNoFileComp
}

// completer completes names from the cluster the flags select, klog
// silenced while it asks.
func (f *clusterFlags) completer() completion.Completer {
	return completion.Completer{Config: f.restConfig, Quiet: logs.Quiet}
}
