package rbac

import (
	"slices"

	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// withTenants returns file with, when it lets tenants write rules, the
// tenants' stand-in rule after its own (standIn): what any
// tenant's rules may need is then granted as a rule's would be.
func withTenants(file *rulefile.File) *rulefile.File {
	r := standIn(file.Tenants)
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

// standIn returns a rule that names every resource limits let tenant rules
// write, in every namespace, and reads what the value forms they allow
// read by default (a Pod's Node, the owners walked through by default,
// the namespace): what the controller may need granted for any tenant's
// rules. fromRef reads resources a tenant names, which no stand-in can
// know. Nil when limits is.
func standIn(limits *spec.Tenants) *spec.Rule {
	if limits == nil {
		return nil
	}
	r := &spec.Rule{Name: "tenants", Resources: slices.Clone(limits.Resources)}
	m := &r.Labels
	if slices.Contains(limits.ValueForms, "fromNamespace") {
		m.FromNamespace = map[string]spec.NamespaceKey{"fromNamespace": {Kind: spec.LabelKind, Key: "k"}}
	}
	if slices.Contains(limits.ValueForms, source.Node.Field) {
		m.FromRelated = spec.Put(m.FromRelated, "fromNode", spec.RelatedKey{Source: source.Node, Kind: spec.LabelKind, Key: "k"})
	}
	if slices.Contains(limits.ValueForms, source.Owner.Field) {
		owners := &spec.Owners{}
		owners.Complete()
		m.FromRelated = spec.Put(m.FromRelated, "fromOwner", spec.RelatedKey{Source: source.Owner, Kind: spec.LabelKind, Key: "k", Owners: owners})
	}
	return r
}
