package sensitive

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A Resource is a resource on which the controller's verbs (get, list,
// watch and patch, granted cluster-wide by the rbac command) give its
// service account power over the cluster's security: credentials,
// permissions, admission control, API definitions.
type Resource struct {
	// GroupResource is the resource.
	GroupResource schema.GroupResource
	// Names are the other names kubectl accepts for it (singular, short),
	// to classify a name as written when no cluster is asked.
	Names []string
	// Can completes "the controller's service account can …".
	Can string
}

// sensitiveResources are the resources that check and rbac warn about.
// Workloads are not among them, although patching a Pod template changes
// what runs: that is in the nature of every annotating controller.
var sensitiveResources = []Resource{
	{GroupResource: core("secrets"), Names: []string{"secret"},
		Can: "read the data of every Secret in every namespace (passwords, keys, tokens: RBAC cannot limit a read to metadata, whatever the controller itself reads) and change any of them"},
	{GroupResource: core("serviceaccounts"), Names: []string{"serviceaccount", "sa"},
		Can: "change any ServiceAccount: its annotations, which on some platforms choose the cloud identity its Pods get (workload identity), its image pull secrets, and whether its token is mounted"},
	{GroupResource: core("namespaces"), Names: []string{"namespace", "ns"},
		Can: "change any Namespace's labels, which switch Pod Security admission for it (pod-security.kubernetes.io/enforce) and select it in network and admission policies"},
	{GroupResource: rbacGR("roles"), Names: []string{"role"}, Can: roleCan("Role")},
	{GroupResource: rbacGR("clusterroles"), Names: []string{"clusterrole"}, Can: roleCan("ClusterRole")},
	{GroupResource: rbacGR("rolebindings"), Names: []string{"rolebinding"}, Can: bindingCan("RoleBinding")},
	{GroupResource: rbacGR("clusterrolebindings"), Names: []string{"clusterrolebinding"}, Can: bindingCan("ClusterRoleBinding")},
	{GroupResource: admissionGR("validatingwebhookconfigurations"), Names: []string{"validatingwebhookconfiguration"},
		Can: "change the cluster's validating webhooks: turn their checks off, or send the objects of the requests they match to another service"},
	{GroupResource: admissionGR("mutatingwebhookconfigurations"), Names: []string{"mutatingwebhookconfiguration"},
		Can: "change the cluster's mutating webhooks: turn them off, or send the objects of the requests they match to another service, which may then change them"},
	{GroupResource: admissionGR("validatingadmissionpolicies"), Names: []string{"validatingadmissionpolicy"},
		Can: "change the cluster's validating admission policies: weaken or turn off what they enforce"},
	{GroupResource: admissionGR("validatingadmissionpolicybindings"), Names: []string{"validatingadmissionpolicybinding"},
		Can: "change where the cluster's validating admission policies apply, and whether they deny: weaken or turn them off"},
	{GroupResource: admissionGR("mutatingadmissionpolicies"), Names: []string{"mutatingadmissionpolicy"},
		Can: "change the cluster's mutating admission policies: turn them off, or make them change any object they match as it is written"},
	{GroupResource: admissionGR("mutatingadmissionpolicybindings"), Names: []string{"mutatingadmissionpolicybinding"},
		Can: "change where the cluster's mutating admission policies apply: turn them off, or apply them to other objects"},
	{GroupResource: schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
		Names: []string{"customresourcedefinition", "crd", "crds"},
		Can:   "change any custom resource's definition: stop serving it, loosen its schema, or send its objects to another conversion webhook"},
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

// ByGroupResource returns what the controller's verbs on gr give
// its service account, when gr is sensitive.
func ByGroupResource(gr schema.GroupResource) (Resource, bool) {
	for _, s := range sensitiveResources {
		if s.GroupResource == gr {
			return s, true
		}
	}
	return Resource{}, false
}

// ByName classifies a resource name as a rule writes it (plural,
// singular, short name, "resource.group", "resource.version.group") without
// asking a cluster: a name without a group is taken as the built-in
// resource of that name, as kubectl would prefer it.
func ByName(name string) (Resource, bool) {
	full, gr := schema.ParseResourceArg(name)
	candidates := []schema.GroupResource{gr}
	if full != nil {
		candidates = append(candidates, full.GroupResource())
	}
	for _, s := range sensitiveResources {
		for _, c := range candidates {
			if (c.Group == s.GroupResource.Group || c.Group == "") && (c.Resource == s.GroupResource.Resource || slices.Contains(s.Names, c.Resource)) {
				return s, true
			}
		}
	}
	return Resource{}, false
}
