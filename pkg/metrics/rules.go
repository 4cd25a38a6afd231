package metrics

import "github.com/prometheus/client_golang/prometheus"

// Actions of kube_annotator_rule_keys_changed_total: a key set or removed.
const (
	ActionSet    = "set"
	ActionRemove = "remove"
)

// Scopes of kube_annotator_ignored_objects: what carries the opt-out
// annotation, the object or its namespace.
const (
	ScopeObject    = "object"
	ScopeNamespace = "namespace"
)

// UnsetReasons are the reasons of kube_annotator_rule_unset_objects, why
// a rule could not compute a key's value on an object: rules.Reasons.
var UnsetReasons = []string{"error", "invalid", "source-missing"}

// RuleMetrics are the metrics of each rule, labelled by its name.
type RuleMetrics struct {
	// Selected is the number of objects each rule selects, as last synced.
	Selected *prometheus.GaugeVec
	// AuditPending is the number of objects each rule in audit mode would
	// change, as last synced.
	AuditPending *prometheus.GaugeVec
	// KeysChanged counts keys written, by the rule that wants them
	// (rule="" for a key no rule wants any more) and action.
	KeysChanged *prometheus.CounterVec
	// Conflicts counts syncs in which the rule wanted another value for a
	// key than another selected rule.
	Conflicts *prometheus.CounterVec
	// Ignored is the number of objects left alone because they or their
	// namespace opt out, by resource and scope.
	Ignored *prometheus.GaugeVec
	// Unset is the number of objects on which a rule could not compute
	// the value of a key it sets, as last synced, by rule and reason (one
	// of UnsetReasons).
	Unset *prometheus.GaugeVec
	// Coverage is the number of objects on which each rule's key is in
	// each state (CoverageStates), as last synced.
	Coverage *Coverage
}

func newRuleMetrics() RuleMetrics {
	return RuleMetrics{
		Selected: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "rule_selected_objects",
			Help: "Objects each rule selects, as last synced, by rule.",
		}, []string{"rule"}),
		AuditPending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "rule_audit_pending_objects",
			Help: "Objects a rule in audit mode would change if it were enforced, as last synced, by rule.",
		}, []string{"rule"}),
		KeysChanged: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "rule_keys_changed_total",
			Help: "Annotation and label keys written, by the rule that wants them (empty: a key no rule wants any more) and action (set or remove).",
		}, []string{"rule", "action"}),
		Conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "rule_conflicts_by_rule_total",
			Help: "Syncs in which a rule and another selected rule wanted different values for one key, by rule (both rules count).",
		}, []string{"rule"}),
		Ignored: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "ignored_objects",
			Help: "Objects left alone because they or their namespace carry kube-annotator.io/ignore: \"true\", by resource and scope (object or namespace).",
		}, []string{"resource", "scope"}),
		Unset: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "rule_unset_objects",
			Help: "Objects on which a rule could not compute the value of a key it sets, as last synced, by rule and reason: " +
				"error (its expression failed; the object keeps the value it has), invalid (not a valid value for the key), " +
				"source-missing (the field or object it reads is absent); invalid and source-missing only where the rule gives no default.",
		}, []string{"rule", "reason"}),
		Coverage: newCoverage(),
	}
}

func (r RuleMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.Selected, r.AuditPending, r.KeysChanged, r.Conflicts, r.Ignored, r.Unset, r.Coverage}
}

// InitRule creates the series of rule at zero, so that they exist before
// its first sync.
func (m *Metrics) InitRule(rule string) {
	m.PerRule.Selected.WithLabelValues(rule)
	m.PerRule.AuditPending.WithLabelValues(rule)
	m.PerRule.Conflicts.WithLabelValues(rule)
	for _, a := range []string{ActionSet, ActionRemove} {
		m.PerRule.KeysChanged.WithLabelValues(rule, a)
	}
	for _, r := range UnsetReasons {
		m.PerRule.Unset.WithLabelValues(rule, r)
	}
}
