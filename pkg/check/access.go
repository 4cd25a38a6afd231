package check

import (
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

	"github.com/kube-annotator/kube-annotator/pkg/rbac"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// A Row is the verdict on one resource of one rule, as the text table
// prints it.
type Row struct {
	rule, resource, servedAs, status string
	// denied are the verbs the user may not use on it.
	denied []string
	// gr is the group and resource it is served as; zero when it is not
	// served.
	gr schema.GroupResource
}

// Rules checks every resource of every rule in file, resolving it
// through resolver and asking cs whether the user may do what the controller
// does with it, in namespace ("" for all). A resource that is not served or
// not allowed is a row saying so; an error means that the API server could
// not be asked, so there is no verdict.
func Rules(ctx context.Context, file *rulefile.File, resolver rules.ResolveFunc, cs kubernetes.Interface, namespace string) ([]Row, error) {
	var rows []Row
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

// ServedAs maps the resources of rows, as written, to the group and
// resource they are served as.
func ServedAs(rows []Row) map[string]schema.GroupResource {
	m := map[string]schema.GroupResource{}
	for _, r := range rows {
		if r.gr.Resource != "" {
			m[r.resource] = r.gr
		}
	}
	return m
}

// printRows prints rows as a table.
func printRows(out io.Writer, rows []Row) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RULE\tRESOURCE\tSERVED AS\tSTATUS")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.rule, r.resource, r.servedAs, r.status)
	}
	return w.Flush()
}

// checkResource resolves name and asks the API server whether the current
// user may do what the controller does with it for rule, where it does it
// (rbac.Needs) when limited to namespace ("" for all). A resource the
// server does not serve has the status "not found"; an error says that the
// server could not be asked. The row's rule is left to the caller.
func checkResource(ctx context.Context, resolver rules.ResolveFunc, cs kubernetes.Interface, rule *rulefile.Rule, name, namespace string) (Row, error) {
	res, err := resolver(name)
	if errors.Is(err, resolve.ErrNotServed) {
		return Row{resource: name, servedAs: "-", status: "not found"}, nil
	}
	if err != nil {
		return Row{}, err
	}
	row := Row{resource: name, servedAs: source.GVRString(res.GVR), status: "ok", gr: res.GVR.GroupResource()}
	var denied []string
	for _, a := range rbac.Needs(rule, res.Namespaced, namespace) {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: a.Namespace, Verb: a.Verb, Group: res.GVR.Group, Version: res.GVR.Version, Resource: res.GVR.Resource,
			},
		}}
		got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return Row{}, fmt.Errorf("review access to %s %s: %w", a.Verb, source.GVRString(res.GVR), err)
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

// deniedAccess names a denied, as Row.denied lists it: the verb, and
// the namespace when it is one the rule names rather than the check's.
func deniedAccess(a rbac.Access, namespace string) string {
	if a.Namespace == namespace || a.Namespace == "" {
		return a.Verb
	}
	return a.Verb + " in " + a.Namespace
}

// Resolved maps the names in file's rules that resolveName resolves to
// their group and resource.
func Resolved(file *rulefile.File, resolveName rules.ResolveFunc) map[string]schema.GroupResource {
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
