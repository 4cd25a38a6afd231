package rbac

import (
	"slices"

	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/tenants"
)

// withTenants returns file with, when it lets tenants write rules, the
// tenants' stand-in rule after its own (tenants.StandIn): what any
// tenant's rules may need is then granted as a rule's would be.
func withTenants(file *rulefile.File) *rulefile.File {
	r := tenants.StandIn(file.Tenants)
	if r == nil {
		return file
	}
	out := *file
	out.Rules = append(slices.Clip(file.Rules), *r)
	return &out
}

// tenantVerbs are what the controller does with the tenants' ConfigMaps:
// read them, and apply the status annotation (a PATCH).
var tenantVerbs = []string{"get", "list", "watch", "patch"}

// tenantRules grant what reading the tenants' rules files needs: their
// ConfigMaps (by name, when the section names them: list and watch by a
// metadata.name field selector are granted by resourceNames), the
// Namespaces when it selects them by label, and the Warning Events on
// the ConfigMaps, unless granted already.
func tenantRules(file *rulefile.File, o Options, watchesNamespaces bool) []*rbacv1ac.PolicyRuleApplyConfiguration {
	t := file.Tenants
	if t == nil {
		return nil
	}
	cm := policyRule("", []string{"configmaps"}, tenantVerbs...)
	if t.ConfigMap != "" {
		cm = cm.WithResourceNames(t.ConfigMap)
	}
	out := []*rbacv1ac.PolicyRuleApplyConfiguration{cm}
	if t.NamespaceSelector != "" && !watchesNamespaces {
		out = append(out, policyRule("", []string{"namespaces"}, readOnlyVerbs...))
	}
	if !o.Events {
		out = append(out, policyRule("events.k8s.io", []string{"events"}, eventVerbs...))
	}
	return out
}
