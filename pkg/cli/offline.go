package cli

import (
	"errors"
	"fmt"

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

// checkOffline is check --offline of file, reporting to r as output
// says: it compiles the rules against the resources known offline, which
// finds the conflicts and cycles that only resolved names show (errors),
// and reports the names it does not know as warnings, which do not fail
// the check, as a cluster may serve them.
func (e *env) checkOffline(output string, file *rules.File, r *checkReport, cf *clusterFlags) error {
	_, res, err := cf.resolver()
	if err != nil {
		return err
	}
	_, unresolved, err := resolve.Compile(r.File, file, res.Resolve, res.Schema, nil)
	if err != nil {
		return e.reportInvalid(output, r, true, err)
	}
	for i := range unresolved {
		unresolved[i].Message += "; its rules are not checked against rules that name it in other ways"
	}
	e.addProblems(r, output, severityWarning, unresolved)
	e.addProblems(r, output, severityWarning, sensitiveProblems(file, resolvedGroupResources(file, res.Resolve)))
	return e.printReport(output, r, true)
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
