package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
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
	r, err := resolve.NewOffline(o.crds...)
	if err != nil {
		return nil, fmt.Errorf("--crd: %w", err)
	}
	return r, nil
}

// notServedBy says where a name r resolves is not served: by the cluster,
// or offline.
func notServedBy(r *resolve.Resolver) string {
	if r.Offline() {
		return "known offline (built in, or defined by a --crd file)"
	}
	return "served by the cluster"
}

// checkOffline is check --offline of file, loaded from path: it compiles
// the rules against the resources known offline, which finds the
// conflicts and cycles that only resolved names show, and warns of the
// names it does not know; they do not fail the check, as a cluster may
// serve them.
func (e *env) checkOffline(path string, file *rules.File, cf *clusterFlags) error {
	_, r, err := cf.resolver()
	if err != nil {
		return err
	}
	_, unresolved, err := resolve.Compile(path, file, r.Resolve, nil)
	if err != nil {
		return err
	}
	for _, u := range unresolved {
		fmt.Fprintf(e.Err, "warning: %s: %s: %s; its rules are not checked against rules that name it in other ways\n", path, u.Field, u.Message)
	}
	warnSensitive(e.Err, path, file, resolvedGroupResources(file, r.Resolve))
	printValid(e.Out, path, file)
	return nil
}

// resolvedGroupResources maps the names in file's rules that resolve to
// their group and resource.
func resolvedGroupResources(file *rules.File, resolveName rules.ResolveFunc) map[string]schema.GroupResource {
	out := map[string]schema.GroupResource{}
	for _, rule := range file.Rules {
		for _, name := range rule.Resources {
			if res, err := resolveName(name); err == nil {
				out[name] = res.GVR.GroupResource()
			}
		}
	}
	return out
}

// printValid says that file, loaded from path, is valid, counting its
// rules in English.
func printValid(w io.Writer, path string, file *rules.File) {
	plural := "s"
	if len(file.Rules) == 1 {
		plural = ""
	}
	fmt.Fprintf(w, "%s: valid (%d rule%s)\n", path, len(file.Rules), plural)
}
