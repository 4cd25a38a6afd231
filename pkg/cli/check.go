package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/spf13/cobra"

	"github.com/kube-annotator/kube-annotator/pkg/rbac"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
)

func (e *env) newCheckCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "check",
		Short: "Validate a rules file; resolve and check permissions on a cluster",
		Long: "Validate a rules file: schema, annotation keys and values; then, unless --offline,\n" +
			"resolve every resource on the cluster and check that you may do with it what run does, where run does it: list and watch it,\n" +
			"and get and patch it, in the namespaces a rule names literally or else in all (in -n's alone with -n).\n" +
			"With --offline, resolve them among the built-in resources of Kubernetes " + staticdiscovery.KubeVersion() + " and the CRDs of --crd\n" +
			"files, which finds conflicting rules; a name not known offline is a warning.\n" +
			"Exit status: 0 all ok (offline: valid), 1 invalid or not all ok, 2 no verdict: the cluster could not be asked.",
		Args: noArgs,
	}
	rulesPath := addRulesFlag(c)
	fs := newFlags(c)
	offline := addOfflineFlags(c, "Do not contact a cluster: validate the file and compile it against the built-in resources and the --crd files")
	output := addOutputFlag(c)
	cf := addClusterFlags(c, terminalRequestTimeout)
	cf.offline = offline
	cf.addAllNamespacesFlag(fs, "Check access in every namespace (cluster-wide): what check does without -n, whatever the kubeconfig context's namespace")
	addLogFlags(fs)
	c.RunE = func(c *cobra.Command, _ []string) error {
		if err := cmp.Or(validateOutput(*output), cf.validate(), defaultRulesExist(fs)); err != nil {
			return usageError{err}
		}
		ctx, restore := e.logging(c.Context(), fs)
		defer restore()
		return e.check(ctx, *rulesPath, *output, cf)
	}
	return c
}

// check validates the rules file at path and, unless offline, checks its
// resources on the cluster; it prints what it found as output says.
func (e *env) check(ctx context.Context, path, output string, cf *clusterFlags) error {
	r := &checkReport{File: path, Problems: []checkProblem{}}
	offline := cf.offline.enabled()
	file, err := rules.Load(path)
	if err != nil {
		return e.reportInvalid(output, r, offline, err)
	}
	r.Valid, r.Rules = true, len(file.Rules)
	e.addProblems(r, output, severityWarning, rules.Overlaps(file))
	if offline {
		return e.checkOffline(output, file, r, cf)
	}
	cfg, res, err := cf.resolver()
	if err != nil {
		return withOfflineHint(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return &exitError{checkFailed, err}
	}
	if _, _, err := resolve.Compile(path, file, res.Resolve, res.Schema, nil); errors.Is(err, resolve.ErrUnreachable) {
		return withOfflineHint(err)
	} else if err != nil {
		return e.reportInvalid(output, r, offline, err)
	}
	rows, err := checkRules(ctx, file, res.Resolve, cs, cf.namespace())
	if err != nil {
		return withOfflineHint(err) // no verdict on the rules: the cluster did not answer
	}
	e.addProblems(r, output, severityWarning, sensitiveProblems(file, servedAs(rows)))
	noteAdmissionServer(ctx, e.Err, cfg)
	r.addRows(rows)
	return e.printReport(output, r, offline)
}

// reportInvalid answers err, which stopped the check of r's file. When it
// says the rules are invalid — they do not load, type-check or agree — and
// output is structured, it is the report's errors, and the file counts no
// valid rules; otherwise it is returned as it is.
func (e *env) reportInvalid(output string, r *checkReport, offline bool, err error) error {
	var invalid *rules.Error
	if !errors.As(err, &invalid) || output == "" {
		return err
	}
	r.Valid, r.Rules = false, 0
	e.addProblems(r, output, severityError, invalid.Fields)
	return e.printReport(output, r, offline)
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

// A checkRow is the verdict on one resource of one rule.
type checkRow struct {
	rule, resource, servedAs, status string
	// denied are the verbs the user may not use on it.
	denied []string
	// gr is the group and resource it is served as; zero when it is not
	// served.
	gr schema.GroupResource
}

// checkRules checks every resource of every rule in file, resolving it
// through resolver and asking cs whether the user may do what the controller
// does with it, in namespace ("" for all). A resource that is not served or
// not allowed is a row saying so; an error means that the API server could
// not be asked, so there is no verdict.
func checkRules(ctx context.Context, file *rules.File, resolver rules.ResolveFunc, cs kubernetes.Interface, namespace string) ([]checkRow, error) {
	var rows []checkRow
	for _, rule := range file.Rules {
		for _, name := range rule.Resources {
			row, err := checkResource(ctx, resolver, cs, &rule, name, namespace)
			if err != nil {
				return nil, fmt.Errorf("rule %q: could not ask the API server: %w", rule.Name, err)
			}
			row.rule = rule.Name
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// servedAs maps the resources of rows, as written, to the group and
// resource they are served as.
func servedAs(rows []checkRow) map[string]schema.GroupResource {
	m := map[string]schema.GroupResource{}
	for _, r := range rows {
		if r.gr.Resource != "" {
			m[r.resource] = r.gr
		}
	}
	return m
}

// printChecks prints rows as a table; ok says whether every status is ok.
func printChecks(out io.Writer, rows []checkRow) (ok bool, err error) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RULE\tRESOURCE\tSERVED AS\tSTATUS")
	ok = true
	for _, r := range rows {
		ok = ok && r.status == "ok"
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.rule, r.resource, r.servedAs, r.status)
	}
	return ok, w.Flush()
}

// checkResource resolves name and asks the API server whether the current
// user may do what the controller does with it for rule, where it does it
// (rbac.Needs) when limited to namespace ("" for all). A resource the
// server does not serve has the status "not found"; an error says that the
// server could not be asked. The row's rule is left to the caller.
func checkResource(ctx context.Context, resolver rules.ResolveFunc, cs kubernetes.Interface, rule *rules.Rule, name, namespace string) (checkRow, error) {
	res, err := resolver(name)
	if errors.Is(err, resolve.ErrNotServed) {
		return checkRow{resource: name, servedAs: "-", status: "not found"}, nil
	}
	if err != nil {
		return checkRow{}, err
	}
	row := checkRow{resource: name, servedAs: source.GVRString(res.GVR), status: "ok", gr: res.GVR.GroupResource()}
	var denied []string
	for _, a := range rbac.Needs(rule, res.Namespaced, namespace) {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: a.Namespace, Verb: a.Verb, Group: res.GVR.Group, Version: res.GVR.Version, Resource: res.GVR.Resource,
			},
		}}
		got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return checkRow{}, fmt.Errorf("review access to %s %s: %w", a.Verb, source.GVRString(res.GVR), err)
		}
		if !got.Status.Allowed {
			denied = append(denied, deniedAccess(a, namespace))
		}
	}
	if len(denied) > 0 {
		row.status, row.denied = "forbidden: cannot "+strings.Join(denied, ", "), denied
	}
	return row, nil
}

// deniedAccess names a denied, as checkRow.denied lists it: the verb, and
// the namespace when it is one the rule names rather than the check's.
func deniedAccess(a rbac.Access, namespace string) string {
	if a.Namespace == namespace || a.Namespace == "" {
		return a.Verb
	}
	return a.Verb + " in " + a.Namespace
}
