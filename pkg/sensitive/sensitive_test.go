package sensitive

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestByGroupResource(t *testing.T) {
	tests := []struct {
		gr   schema.GroupResource
		want bool
	}{
		{core("secrets"), true},
		{core("serviceaccounts"), true},
		{core("namespaces"), true},
		{rbacGR("roles"), true},
		{rbacGR("clusterroles"), true},
		{rbacGR("rolebindings"), true},
		{rbacGR("clusterrolebindings"), true},
		{admissionGR("validatingwebhookconfigurations"), true},
		{admissionGR("mutatingwebhookconfigurations"), true},
		{admissionGR("validatingadmissionpolicies"), true},
		{admissionGR("validatingadmissionpolicybindings"), true},
		{admissionGR("mutatingadmissionpolicies"), true},
		{admissionGR("mutatingadmissionpolicybindings"), true},
		{schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, true},
		{core("configmaps"), false},
		{core("pods"), false},
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, false},
		{schema.GroupResource{Group: "example.com", Resource: "secrets"}, false},
		{schema.GroupResource{Group: "example.com", Resource: "roles"}, false},
		{schema.GroupResource{Group: "ship.nwiizo.dev", Resource: "frigates"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.gr.String(), func(t *testing.T) {
			s, got := ByGroupResource(tc.gr)
			if got != tc.want {
				t.Fatalf("sensitive = %v, want %v", got, tc.want)
			}
			if got && (s.GroupResource != tc.gr || s.Can == "") {
				t.Errorf("got the entry %+v for %s", s, tc.gr)
			}
		})
	}
}

func TestByName(t *testing.T) {
	tests := []struct {
		name string
		want string // the group and resource it is classified as; "" when not sensitive
	}{
		{"secrets", "secrets"},
		{"secret", "secrets"},
		{"sa", "serviceaccounts"},
		{"serviceaccount", "serviceaccounts"},
		{"ns", "namespaces"},
		{"clusterroles", "clusterroles.rbac.authorization.k8s.io"},
		{"rolebinding", "rolebindings.rbac.authorization.k8s.io"},
		{"clusterrolebindings.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io"},
		{"roles.v1.rbac.authorization.k8s.io", "roles.rbac.authorization.k8s.io"},
		{"crd", "customresourcedefinitions.apiextensions.k8s.io"},
		{"crds.apiextensions.k8s.io", "customresourcedefinitions.apiextensions.k8s.io"},
		{"customresourcedefinitions.v1.apiextensions.k8s.io", "customresourcedefinitions.apiextensions.k8s.io"},
		{"mutatingwebhookconfigurations", "mutatingwebhookconfigurations.admissionregistration.k8s.io"},
		{"validatingadmissionpolicy.admissionregistration.k8s.io", "validatingadmissionpolicies.admissionregistration.k8s.io"},
		{"configmaps", ""},
		{"cm", ""},
		{"deployments.v1.apps", ""},
		{"frigates.ship.nwiizo.dev", ""},
		{"secrets.example.com", ""},
		{"roles.example.com", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := ByName(tc.name)
			got := ""
			if ok {
				got = s.GroupResource.String()
			}
			if got != tc.want {
				t.Errorf("classified as %q, want %q", got, tc.want)
			}
		})
	}
}

// Every entry is found under each of its names, and no name is claimed by
// two entries.
func TestSensitiveResourcesTable(t *testing.T) {
	owner := map[string]schema.GroupResource{}
	for _, s := range sensitiveResources {
		for _, name := range append([]string{s.GroupResource.Resource}, s.Names...) {
			qualified := schema.GroupResource{Group: s.GroupResource.Group, Resource: name}.String()
			if prev, dup := owner[qualified]; dup {
				t.Errorf("%s names both %s and %s", qualified, prev, s.GroupResource)
			}
			owner[qualified] = s.GroupResource
			if got, ok := ByName(qualified); !ok || got.GroupResource != s.GroupResource {
				t.Errorf("ByName(%q) = %v, %v; want %s", qualified, got.GroupResource, ok, s.GroupResource)
			}
		}
		if strings.HasSuffix(s.Can, ".") || s.Can == "" {
			t.Errorf("%s: can %q must complete a sentence", s.GroupResource, s.Can)
		}
	}
}
