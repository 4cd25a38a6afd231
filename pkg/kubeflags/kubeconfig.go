package kubeflags

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ValidateKubeconfig reports, naming the flag, a --context, --cluster or
// --user that the kubeconfig does not have: said before anything is asked
// of a cluster. A kubeconfig that cannot be read is left for RESTConfig to
// report.
func (k *Flags) ValidateKubeconfig() error {
	raw, ok := k.RawKubeconfig()
	if !ok {
		return nil
	}
	for _, n := range []struct {
		flag, value string
		names       []string
	}{
		{"context", k.context, slices.Collect(maps.Keys(raw.Contexts))},
		{"cluster", k.cluster, slices.Collect(maps.Keys(raw.Clusters))},
		{"user", k.user, slices.Collect(maps.Keys(raw.AuthInfos))},
	} {
		if n.value == "" || slices.Contains(n.names, n.value) {
			continue
		}
		if len(n.names) == 0 {
			return fmt.Errorf("--%s %q: the kubeconfig has no %s", n.flag, n.value, n.flag)
		}
		slices.Sort(n.names)
		return fmt.Errorf("--%s %q: the kubeconfig has no such %s; it has %s", n.flag, n.value, n.flag, strings.Join(n.names, ", "))
	}
	return nil
}

// RawKubeconfig is the kubeconfig the flags select, merged, as written;
// ok is false when it cannot be read.
func (k *Flags) RawKubeconfig() (raw clientcmdapi.Config, ok bool) {
	loader, err := k.Loader()
	if err != nil {
		return raw, false
	}
	raw, err = loader.RawConfig()
	return raw, err == nil
}
