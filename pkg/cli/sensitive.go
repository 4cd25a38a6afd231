package cli

import (
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// A sensitiveResource is a resource on which the controller's verbs (get,
// list, watch and patch, granted cluster-wide by rbac) give its service
// account power over the cluster's security: credentials, permissions,
// admission control, API definitions.
type sensitiveResource struct {
	gr schema.GroupResource
	// names are the other names kubectl accepts for it (singular, short),
	// to classify a name as written when no cluster is asked.
	names []string
	// can completes "the controller's service account can …".
	can string
}

// sensitiveResources are the resources that check and rbac warn about.
// Workloads are not among them, although patching a Pod template changes
// what runs: that is in the nature of every annotating controller.
var sensitiveResources = []sensitiveResource{
	{gr: core("secrets"), names: []string{"secret"},
		can: "read the data of every Secret in every namespace (passwords, keys, tokens: RBAC cannot limit a read to metadata, whatever the controller itself reads) and change any of them"},
	{gr: core("serviceaccounts"), names: []string{"serviceaccount", "sa"},
		can: "change any ServiceAccount: its annotations, which on some platforms choose the cloud identity its Pods get (workload identity), its image pull secrets, and whether its token is mounted"},
	{gr: core("namespaces"), names: []string{"namespace", "ns"},
		can: "change any Namespace's labels, which switch Pod Security admission for it (pod-security.kubernetes.io/enforce) and select it in network and admission policies"},
	{gr: rbacGR("roles"), names: []string{"role"}, can: roleCan("Role")},
	{gr: rbacGR("clusterroles"), names: []string{"clusterrole"}, can: roleCan("ClusterRole")},
	{gr: rbacGR("rolebindings"), names: []string{"rolebinding"}, can: bindingCan("RoleBinding")},
	{gr: rbacGR("clusterrolebindings"), names: []string{"clusterrolebinding"}, can: bindingCan("ClusterRoleBinding")},
	{gr: admissionGR("validatingwebhookconfigurations"), names: []string{"validatingwebhookconfiguration"},
		can: "change the cluster's validating webhooks: turn their checks off, or send the objects of the requests they match to another service"},
	{gr: admissionGR("mutatingwebhookconfigurations"), names: []string{"mutatingwebhookconfiguration"},
		can: "change the cluster's mutating webhooks: turn them off, or send the objects of the requests they match to another service, which may then change them"},
	{gr: admissionGR("validatingadmissionpolicies"), names: []string{"validatingadmissionpolicy"},
		can: "change the cluster's validating admission policies: weaken or turn off what they enforce"},
	{gr: admissionGR("validatingadmissionpolicybindings"), names: []string{"validatingadmissionpolicybinding"},
		can: "change where the cluster's validating admission policies apply, and whether they deny: weaken or turn them off"},
	{gr: admissionGR("mutatingadmissionpolicies"), names: []string{"mutatingadmissionpolicy"},
		can: "change the cluster's mutating admission policies: turn them off, or make them change any object they match as it is written"},
	{gr: admissionGR("mutatingadmissionpolicybindings"), names: []string{"mutatingadmissionpolicybinding"},
		can: "change where the cluster's mutating admission policies apply: turn them off, or apply them to other objects"},
	{gr: schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
		names: []string{"customresourcedefinition", "crd", "crds"},
		can:   "change any custom resource's definition: stop serving it, loosen its schema, or send its objects to another conversion webhook"},
}

// roleCan is what patching every role of kind allows. The API server's
// escalation check refuses an update, even of an annotation, after which
// the role would grant something the service account does not hold.
func roleCan(kind string) string {
	return "read what every " + kind + " allows, and rewrite any " + kind + " so that it grants nothing beyond the service account's own permissions: " +
		"strip it of what it grants, or give it the service account's own (the API server refuses other changes, even of an annotation, so the rule fails on roles that grant more)"
}

// bindingCan is what patching every binding of kind allows. The API
// server refuses an update, even of an annotation, of a binding whose role
// grants something the service account does not hold.
func bindingCan(kind string) string {
	return "read who holds which role, and change the subjects of any " + kind + " whose role grants nothing beyond the service account's own permissions: " +
		"hand that role to anyone, or take it from its holders (the API server refuses any change, even of an annotation, to the other bindings, so the rule fails on them)"
}

func core(resource string) schema.GroupResource { return schema.GroupResource{Resource: resource} }

func rbacGR(resource string) schema.GroupResource {
	return schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: resource}
}

func admissionGR(resource string) schema.GroupResource {
	return schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: resource}
}

// sensitiveGroupResource returns what the controller's verbs on gr give its
// service account, when gr is sensitive.
func sensitiveGroupResource(gr schema.GroupResource) (sensitiveResource, bool) {
	for _, s := range sensitiveResources {
		if s.gr == gr {
			return s, true
		}
	}
	return sensitiveResource{}, false
}

// sensitiveName classifies a resource name as a rule writes it (plural,
// singular, short name, "resource.group", "resource.version.group") without
// asking a cluster: a name without a group is taken as the built-in
// resource of that name, as kubectl would prefer it.
func sensitiveName(name string) (sensitiveResource, bool) {
	full, gr := schema.ParseResourceArg(name)
	candidates := []schema.GroupResource{gr}
	if full != nil {
		candidates = append(candidates, full.GroupResource())
	}
	for _, s := range sensitiveResources {
		for _, c := range candidates {
			if (c.Group == s.gr.Group || c.Group == "") && (c.Resource == s.gr.Resource || slices.Contains(s.names, c.Resource)) {
				return s, true
			}
		}
	}
	return sensitiveResource{}, false
}

// sensitiveWarning is the warning about resource j of rule i in the rules
// file at path, which the rule names as written and which is s.
func sensitiveWarning(path string, i, j int, rule, written string, s sensitiveResource) string {
	target := written
	if canonical := s.gr.String(); canonical != written {
		target = fmt.Sprintf("%s (%s)", written, canonical)
	}
	return fmt.Sprintf("warning: %s: rules[%d].resources[%d]: rule %q targets %s: the ClusterRole that the rbac command generates grants get, list, watch and patch on all of them, cluster-wide, so the controller's service account can %s",
		path, i, j, rule, target, s.can)
}

// warnSensitive writes to w a warning for every resource of file's rules
// that is sensitive. resolved maps names as written to the group and
// resource they stand for on the cluster; a name it lacks is classified as
// written.
func warnSensitive(w io.Writer, path string, file *rules.File, resolved map[string]schema.GroupResource) {
	for i, rule := range file.Rules {
		for j, name := range rule.Resources {
			s, ok := sensitiveName(name)
			if gr, known := resolved[name]; known {
				s, ok = sensitiveGroupResource(gr)
			}
			if ok {
				fmt.Fprintln(w, sensitiveWarning(path, i, j, rule.Name, name, s))
			}
		}
	}
}
