package controller

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// ruleStats remembers, for every object last synced, the rules that select
// it, the rules in audit mode that would change it and whether it is left
// alone, so that the per-rule gauges count objects rather than syncs.
// Objects that no rule selects and that are not ignored take no memory.
type ruleStats struct {
	m     *metrics.Metrics
	mu    sync.Mutex
	byKey map[Key]objectStats
}

// objectStats is what ruleStats remembers of one object.
type objectStats struct {
	selected []*rules.Compiled // shared with the evaluation: read only
	audit    []string
	ignored  string // "", metrics.ScopeObject or metrics.ScopeNamespace
}

func (s objectStats) empty() bool {
	return len(s.selected) == 0 && len(s.audit) == 0 && s.ignored == ""
}

func newRuleStats(m *metrics.Metrics) *ruleStats {
	return &ruleStats{m: m, byKey: map[Key]objectStats{}}
}

// record replaces what is remembered of key by now, adjusting the gauges.
func (s *ruleStats) record(key Key, now objectStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.byKey[key]
	if slices.Equal(was.selected, now.selected) && slices.Equal(was.audit, now.audit) && was.ignored == now.ignored {
		return
	}
	s.add(key, was, -1)
	s.add(key, now, 1)
	if now.empty() {
		delete(s.byKey, key)
	} else {
		s.byKey[key] = now
	}
}

// add adds delta to the gauges st counts in.
func (s *ruleStats) add(key Key, st objectStats, delta float64) {
	for _, r := range st.selected {
		s.m.PerRule.Selected.WithLabelValues(r.Name).Add(delta)
	}
	for _, r := range st.audit {
		s.m.PerRule.AuditPending.WithLabelValues(r).Add(delta)
	}
	if st.ignored != "" {
		s.m.PerRule.Ignored.WithLabelValues(key.GVR.GroupResource().String(), st.ignored).Add(delta)
	}
}

// forget drops key, an object deleted or no longer ruled.
func (s *ruleStats) forget(key Key) { s.record(key, objectStats{}) }

// forgetResource drops every object of gvr, a resource no longer ruled.
func (s *ruleStats) forgetResource(gvr schema.GroupVersionResource) {
	s.mu.Lock()
	var keys []Key
	for k := range s.byKey {
		if k.GVR == gvr {
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	for _, k := range keys {
		s.forget(k)
	}
}

// statsOf is what ruleStats remembers of obj, decided as d.
func statsOf(obj cached, d reconcile.Decision) objectStats {
	st := objectStats{selected: d.Evaluation.Selected}
	switch {
	case d.Ignored == "":
	case rules.OptsOut(obj.GetAnnotations()):
		st.ignored = metrics.ScopeObject
	default:
		st.ignored = metrics.ScopeNamespace
	}
	for _, a := range d.Audit {
		st.audit = append(st.audit, a.Rule)
	}
	return st
}

// initRules creates the series of every rule in set at zero.
func (c *Controller) initRules(set *rules.Set) {
	for _, t := range set.Targets {
		for _, r := range t.Rules {
			c.opts.Metrics.InitRule(r.Name)
		}
	}
}

// reportAudit logs, counts and (with events) records what rules in audit
// mode would change on obj; nothing is written for them.
func (c *Controller) reportAudit(ctx context.Context, key Key, obj cached, d reconcile.Decision) {
	logger := klog.FromContext(ctx).V(1)
	for _, a := range d.Audit {
		summary := describe(a.Change)
		if logger.Enabled() {
			logger.Info("Audit rule would change object", "key", key.String(), "rule", a.Rule, "change", summary)
		}
		c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "AuditWouldChange", "Audit", "Rule %s (audit mode) would change %s", a.Rule, summary)
	}
}

// countKeys counts the keys a write changed, by the rule that wants them.
func (c *Controller) countKeys(d reconcile.Decision) {
	for _, kv := range []struct {
		kind string
		m    map[string]*string
	}{{"annotation", d.Change.Annotations}, {"label", d.Change.Labels}} {
		for k, v := range kv.m {
			action := metrics.ActionSet
			if v == nil {
				action = metrics.ActionRemove
			}
			c.opts.Metrics.PerRule.KeysChanged.WithLabelValues(d.Evaluation.RuleFor(kv.kind, k), action).Inc()
		}
	}
}
