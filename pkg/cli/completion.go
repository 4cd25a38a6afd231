package cli

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
)

// completionTimeout bounds what a completion asks of the cluster: a shell
// waits for it on every TAB, and a cluster that does not answer in time
// completes nothing.
const completionTimeout = 3 * time.Second

// completionLimit bounds the objects a name completion lists.
const completionLimit = 500

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
	fromKubeconfig := func(names func(*clusterFlags) []string) cobra.CompletionFunc {
		return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return withPrefix(names(f), toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	for flag, fn := range map[string]cobra.CompletionFunc{
		"namespace": f.completeNamespaces,
		"context":   fromKubeconfig(func(f *clusterFlags) []string { r, _ := f.rawKubeconfig(); return keys(r.Contexts) }),
		"cluster":   fromKubeconfig(func(f *clusterFlags) []string { r, _ := f.rawKubeconfig(); return keys(r.Clusters) }),
		"user":      fromKubeconfig(func(f *clusterFlags) []string { r, _ := f.rawKubeconfig(); return keys(r.AuthInfos) }),
	} {
		_ = c.RegisterFlagCompletionFunc(flag, fn) // the flags exist, once each
	}
}

// completeNamespaces completes -n with the cluster's namespaces.
func (f *clusterFlags) completeNamespaces(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	names := f.completing(func(ctx context.Context, cfg *rest.Config) ([]string, error) {
		return listNames(ctx, cfg, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "")
	})
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeObject completes explain's arguments as kubectl get's are: a
// resource the cluster serves, then the names of its objects in the
// namespace (-n, else the kubeconfig context's; every namespace with -A),
// as a second argument or after RESOURCE/.
func (f *clusterFlags) completeObject(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	resource, prefix := "", ""
	switch {
	case len(args) == 1 && !strings.Contains(args[0], "/"):
		resource = args[0]
	case len(args) == 0 && strings.Contains(toComplete, "/"):
		resource, _, _ = strings.Cut(toComplete, "/")
		prefix = resource + "/"
	case len(args) > 0:
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	out := f.completing(func(ctx context.Context, cfg *rest.Config) ([]string, error) {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, err
		}
		if resource == "" {
			return resourceNames(dc)
		}
		res, err := resolve.New(dc).Resolve(resource)
		if err != nil {
			return nil, err
		}
		ns := ""
		if res.Namespaced && !f.allNamespaces {
			if ns, err = f.kube.DefaultNamespace(); err != nil {
				return nil, err
			}
		}
		names, err := listNames(ctx, cfg, res.GVR, ns)
		for i := range names {
			names[i] = prefix + names[i]
		}
		return names, err
	})
	return withPrefix(out, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completing returns what ask finds with the client configuration the
// flags select, asked for at most completionTimeout, with klog and the
// server's warnings silenced: a completion prints nothing but its
// candidates. What fails, or takes longer, completes nothing; discovery
// takes no context, so a slow ask is left behind rather than waited for.
func (f *clusterFlags) completing(ask func(context.Context, *rest.Config) ([]string, error)) []string {
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	found := make(chan []string, 1)
	setKlogQuiet(true)
	go func() {
		// klog stays quiet until ask is done, even when it is left behind.
		defer setKlogQuiet(false)
		names, err := f.ask(ctx, ask)
		if err != nil {
			names = nil // nothing to complete from
		}
		found <- names
	}()
	select {
	case names := <-found:
		return names
	case <-ctx.Done():
		return nil
	}
}

// ask calls ask with the client configuration the flags select, its
// requests bounded by completionTimeout, the server's warnings silenced.
func (f *clusterFlags) ask(ctx context.Context, ask func(context.Context, *rest.Config) ([]string, error)) ([]string, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = min(cfg.Timeout, completionTimeout)
	if cfg.Timeout <= 0 {
		cfg.Timeout = completionTimeout
	}
	cfg.WarningHandler = rest.NoWarnings{}
	return ask(ctx, cfg)
}

// resourceNames are the resources the cluster serves that can be listed,
// named as kubectl api-resources -o name names them: resource.group, or
// resource for the core group.
func resourceNames(dc discovery.DiscoveryInterface) ([]string, error) {
	lists, err := dc.ServerPreferredResources()
	if len(lists) == 0 && err != nil {
		return nil, err
	}
	var out []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "get") {
				continue
			}
			out = append(out, schema.GroupResource{Group: gv.Group, Resource: r.Name}.String())
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// listNames lists the names of gvr's objects in namespace ("" for every
// namespace, or a cluster-scoped resource), at most completionLimit.
func listNames(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) ([]string, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	list, err := mc.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: completionLimit})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list.Items))
	for _, o := range list.Items {
		out = append(out, o.Name)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// withPrefix are the names that start with prefix.
func withPrefix(names []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// keys are the keys of m, sorted.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
