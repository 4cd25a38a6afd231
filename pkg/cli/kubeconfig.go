package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigNames reports, naming the flag, a --context, --cluster or
// --user that the kubeconfig does not have: a usage error, said before
// anything is asked of a cluster. A kubeconfig that cannot be read is left
// for building the client configuration to report.
func (f *clusterFlags) kubeconfigNames() error {
	raw, ok := f.rawKubeconfig()
	if !ok {
		return nil
	}
	for _, n := range []struct {
		flag, what string
		names      []string
	}{
		{"context", "context", slices.Collect(maps.Keys(raw.Contexts))},
		{"cluster", "cluster", slices.Collect(maps.Keys(raw.Clusters))},
		{"user", "user", slices.Collect(maps.Keys(raw.AuthInfos))},
	} {
		v := f.flagValue(n.flag)
		if v == "" || slices.Contains(n.names, v) {
			continue
		}
		if len(n.names) == 0 {
			return fmt.Errorf("--%s %q: the kubeconfig has no %s", n.flag, v, n.what)
		}
		slices.Sort(n.names)
		return fmt.Errorf("--%s %q: the kubeconfig has no such %s; it has %s", n.flag, v, n.what, strings.Join(n.names, ", "))
	}
	return nil
}

// rawKubeconfig is the kubeconfig the connection flags select, merged, as
// written; ok is false when it cannot be read.
func (f *clusterFlags) rawKubeconfig() (raw clientcmdapi.Config, ok bool) {
	loader, err := f.kube.Loader()
	if err != nil {
		return raw, false
	}
	raw, err = loader.RawConfig()
	return raw, err == nil
}

// flagValue is the value of the flag name of the command's flags, or ""
// when it has no such flag.
func (f *clusterFlags) flagValue(name string) string {
	if fl := f.fs.Lookup(name); fl != nil {
		return fl.Value.String()
	}
	return ""
}
