package tenants

import (
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// StandIn returns a rule that names every resource limits let tenant rules
// write, in every namespace, and reads what the value forms they allow
// read by default (a Pod's Node, the owners walked through by default,
// the namespace): what the controller may need granted for any tenant's
// rules. fromRef reads resources a tenant names, which no stand-in can
// know. Nil when limits is.
func StandIn(limits *spec.Tenants) *spec.Rule {
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
