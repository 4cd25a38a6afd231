package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// requiredVerbs are what the controller does with each ruled resource.
var requiredVerbs = []string{"get", "list", "watch", "patch"}

func checkCommand(ctx context.Context, e *env, args []string) int {
	fs := e.newFlagSet("check", "Validate a rules file: schema, annotation keys and values; then, unless --offline,\n"+
		"resolve every resource on the cluster and check that you may get, list, watch and patch it.")
	rulesPath := fs.String("rules", "rules.yaml", "Path to the rules file")
	offline := fs.Bool("offline", false, "Only validate the file; do not contact a cluster")
	cf := addClusterFlags(fs)
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	file, err := rules.Load(*rulesPath)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	if *offline {
		fmt.Fprintf(e.Out, "%s: valid (%d rules)\n", *rulesPath, len(file.Rules))
		return 0
	}
	cfg, r, err := cf.resolver()
	if err != nil {
		fmt.Fprintf(e.Err, "%v\n(use --offline to validate the file without a cluster)\n", err)
		return 1
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	if _, _, err := rules.Compile(*rulesPath, file, r.Resolve); err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}

	w := tabwriter.NewWriter(e.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RULE\tRESOURCE\tSERVED AS\tSTATUS")
	ok := true
	for _, rule := range file.Rules {
		for _, name := range rule.Resources {
			servedAs, status := checkResource(ctx, r, cs, name, cf.namespace())
			if status != "ok" {
				ok = false
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", rule.Name, name, servedAs, status)
		}
	}
	_ = w.Flush()
	if !ok {
		return 1
	}
	return 0
}

// checkResource resolves name and asks the API server whether the current
// user may do what the controller does with it, in namespace ("" for all).
func checkResource(ctx context.Context, r *resolve.Resolver, cs kubernetes.Interface, name, namespace string) (servedAs, status string) {
	res, err := r.Resolve(name)
	if err != nil {
		return "-", "not found"
	}
	if !res.Namespaced {
		namespace = ""
	}
	var denied []string
	for _, verb := range requiredVerbs {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Verb: verb, Group: res.GVR.Group, Version: res.GVR.Version, Resource: res.GVR.Resource,
			},
		}}
		got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return rules.GVRString(res.GVR), "error: " + err.Error()
		}
		if !got.Status.Allowed {
			denied = append(denied, verb)
		}
	}
	if len(denied) > 0 {
		return rules.GVRString(res.GVR), "forbidden: cannot " + strings.Join(denied, ", ")
	}
	return rules.GVRString(res.GVR), "ok"
}
