package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-annotator/kube-annotator/pkg/check"
	"github.com/kube-annotator/kube-annotator/pkg/rbac"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/lint"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
)

// checkOptions are check's flags.
type checkOptions struct {
	*env
	commonFlags
	// tenant is --tenant, a tenant's namespace; tenantFile --tenant-file.
	tenant, tenantFile string
}

func (e *env) newCheckCommand() *cobra.Command {
	o := &checkOptions{env: e}
	c := &cobra.Command{
		Use:   "check",
		Short: "Validate a rules file; resolve and check permissions on a cluster",
		Long: "Validate a rules file: schema, annotation keys and values; then, unless --offline,\n" +
			"resolve every resource on the cluster and check that you may do with it what run does, where run does it: list and watch it,\n" +
			"and get and patch it, in the namespaces a rule names literally or else in all (in -n's alone with -n).\n" +
			"With --offline, resolve them among the built-in resources of Kubernetes " + staticdiscovery.KubeVersion() + " and the CRDs of --crd\n" +
			"files, which finds conflicting rules; a name not known offline is a warning.\n" +
			"With --tenant NAMESPACE, check instead that tenant's rules file, from its ConfigMap or --tenant-file, against the main file's tenants:\n" +
			"section, and compile it with the main file's rules, as run does: print what is in force and what is refused, why and at which line.\n" +
			"Exit status: 0 all ok (offline: valid; --tenant: every rule in force), 1 invalid or not all ok (--tenant: a rule refused, the file\n" +
			"missing or unreadable, the namespace not admitted), 2 no verdict: the cluster could not be asked.",
		Args: noArgs,
	}
	fs := o.addRules(c)
	fs.StringVar(&o.tenant, "tenant", "", "Check the rules file of the tenant of this namespace, within the --rules file's tenants section")
	fs.StringVar(&o.tenantFile, "tenant-file", "", "With --tenant, the tenant's rules file to check instead of its ConfigMap's (needed with --offline)")
	_ = c.MarkFlagFilename("tenant-file", "yaml", "yml") // the flag exists
	o.addOffline(c, "Do not contact a cluster: validate the file and compile it against the built-in resources and the --crd files")
	o.addOutput(c)
	o.addCluster(c, terminalRequestTimeout, clusterScope{
		allNamespaces: "Check access in every namespace (cluster-wide): what check does without -n, whatever the kubeconfig context's namespace"})
	c.RunE = e.runE(o)
	return c
}

func (o *checkOptions) complete(*cobra.Command, []string) error { return nil }

func (o *checkOptions) validate() error {
	var tenant error
	switch {
	case o.tenant == "" && o.tenantFile != "":
		tenant = errors.New("--tenant-file needs --tenant NAMESPACE: a tenant's rules are checked as its namespace's")
	case o.tenant == "":
	case o.offline.enabled() && o.tenantFile == "":
		tenant = errors.New("--tenant with --offline needs --tenant-file: offline, there is no ConfigMap to read")
	case o.cluster.namespace() != "" || o.cluster.allNamespaces:
		tenant = errors.New("--tenant cannot be used with -n or -A: --tenant names the namespace, and no access is reviewed")
	case len(validation.IsDNS1123Label(o.tenant)) > 0:
		tenant = fmt.Errorf("--tenant %q: %s", o.tenant, strings.Join(validation.IsDNS1123Label(o.tenant), "; "))
	}
	return o.commonFlags.validate(tenant)
}

// run validates the rules file and, unless offline, checks its resources
// on the cluster, or with --tenant the tenant's file; it prints what it
// found as -o says.
func (o *checkOptions) run(ctx context.Context) error {
	r := check.NewReport(o.rulesPath)
	file, err := rules.Load(o.rulesPath)
	if err != nil {
		return o.reportInvalid(r, err)
	}
	if o.tenant == "" {
		r.Valid, r.Rules = true, len(file.Rules)
		o.addProblems(r, check.SeverityWarning, lint.Overlaps(file))
	} else if file.Tenants == nil {
		return usageErrorf("--tenant %s: %s has no tenants section: tenants write rules only where the main rules file lets them", o.tenant, o.rulesPath)
	}
	cfg, res, err := o.cluster.resolver()
	if err != nil && o.offline.enabled() {
		return err
	} else if err != nil {
		return withOfflineHint(err)
	}
	var cs kubernetes.Interface // nil offline
	if cfg != nil {
		if cs, err = kubernetes.NewForConfig(cfg); err != nil {
			return &exitError{checkFailed, err}
		}
	}
	var warnings []rulefile.FieldError
	if o.tenant != "" {
		warnings, err = (&check.Tenant{MainPath: o.rulesPath, Main: file, Namespace: o.tenant, Path: o.tenantFile, Client: cs, Resolver: res}).Check(ctx, r)
	} else {
		warnings, err = check.Compile(o.rulesPath, file, res, o.offline.enabled())
	}
	o.addProblems(r, check.SeverityWarning, warnings)
	if errors.Is(err, resolve.ErrUnreachable) {
		return withOfflineHint(err)
	} else if err != nil {
		return o.reportInvalid(r, err)
	}
	if o.offline.enabled() || o.tenant != "" {
		return o.printReport(r)
	}
	rows, err := check.Rules(ctx, file, res.Resolve, cs, o.cluster.namespace())
	if err != nil {
		return withOfflineHint(err) // no verdict on the rules: the cluster did not answer
	}
	o.addProblems(r, check.SeverityWarning, rbac.Sensitive(file, check.ServedAs(rows)))
	noteAdmissionServer(ctx, o.Err, cfg)
	r.AddRows(rows)
	return o.printReport(r)
}

// reportInvalid answers err, which stopped the check of r's file. When it
// says the rules are invalid — they do not load, type-check or agree — and
// -o is given, it is the report's errors, and the file counts no valid
// rules; otherwise it is returned as it is.
func (o *checkOptions) reportInvalid(r *check.Report, err error) error {
	var invalid *rulefile.Error
	if !errors.As(err, &invalid) || o.output == "" {
		return err
	}
	r.Valid, r.Rules = false, 0
	o.addProblems(r, check.SeverityError, invalid.Fields)
	return o.printReport(r)
}

// addProblems adds problems of severity to r and, when r is printed as
// text, prints the warnings on stderr as they are found, as every command
// does.
func (o *checkOptions) addProblems(r *check.Report, severity string, problems []rulefile.FieldError) {
	r.Add(severity, problems)
	if o.output == "" && severity == check.SeverityWarning {
		warn(o.Err, r.File, problems)
	}
}

// printReport prints r: as -o says, or as text (the file's verdict
// offline, else the table of resources); it exits 1 unless r is ok.
func (o *checkOptions) printReport(r *check.Report) error {
	ok := r.Conclude()
	var err error
	if o.output != "" {
		err = encode(o.Out, o.output, r)
	} else {
		err = r.PrintText(o.Out, o.offline.enabled())
	}
	if err == nil && !ok {
		err = exitCode(1) // what is said above says what is not ok
	}
	return err
}

// checkFailed is check's exit status when it reaches no verdict, as
// diff's for an error: the cluster could not be asked. An invalid file
// or a resource that is not ok is a verdict, exit status 1.
const checkFailed = 2

// withOfflineHint is err, which says that the cluster cannot be asked,
// followed by offlineHint, ending check with checkFailed.
func withOfflineHint(err error) error {
	return &exitError{checkFailed, fmt.Errorf("%w\n%s", err, offlineHint)}
}

// offlineHint follows an error that says the cluster cannot be asked.
const offlineHint = "(use --offline to validate the file without a cluster)"
