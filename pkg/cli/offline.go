package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
)

// offlineFlags are --offline and --crd: resolving resource names with no
// cluster, among the built-in resources of the Kubernetes version the
// client library was built for and the CRDs given as files.
type offlineFlags struct {
	offline bool
	crds    []string
}

// addOfflineFlags adds --offline, which usage describes, and --crd to c.
// Set as a clusterFlags' offline, they make its resolver resolve offline
// when --offline is given.
func addOfflineFlags(c *cobra.Command, usage string) *offlineFlags {
	o := &offlineFlags{}
	fs := newFlags(c)
	fs.BoolVar(&o.offline, "offline", false, usage)
	fs.StringArrayVar(&o.crds, "crd", nil,
		"With --offline, a YAML file of CustomResourceDefinitions (apiextensions.k8s.io/v1) whose resources the rules may name; repeatable. "+
			"Built-in resources are those of Kubernetes "+staticdiscovery.KubeVersion())
	_ = c.MarkFlagFilename("crd", "yaml", "yml") // the flag exists
	return o
}

// validate reports --crd without --offline: online, the cluster's
// discovery says which CRDs exist.
func (o *offlineFlags) validate() error {
	if o != nil && !o.offline && len(o.crds) > 0 {
		return errors.New("--crd needs --offline: online, the cluster says which CRDs it serves (install the CRD first)")
	}
	return nil
}

// enabled reports whether --offline was given.
func (o *offlineFlags) enabled() bool { return o != nil && o.offline }

// resolver resolves names offline, with the CRDs of --crd.
func (o *offlineFlags) resolver() (*resolve.Resolver, error) {
	r, err := resolve.NewOffline("--crd", o.crds...)
	if err != nil {
		return nil, fmt.Errorf("--crd: %w", err)
	}
	return r, nil
}
