package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// initRules creates the series of every rule in set at zero, and keeps
// the coverage gauge and the reports to those rules.
func (c *Controller) initRules(set *rules.Set) {
	var names []string
	for _, t := range set.Targets {
		for _, r := range t.Rules {
			c.opts.Metrics.InitRule(r.Name)
			names = append(names, r.Name)
		}
	}
	c.stats.SetRules(names)
}

// reportAudit logs, counts and (with events) records what rules in audit
// mode would change on obj; nothing is written for them.
func (c *Controller) reportAudit(ctx context.Context, key Key, obj objcache.Object, d reconcile.Decision) {
	logger := klog.FromContext(ctx).V(1)
	for _, a := range d.Audit {
		summary := a.Change.Summary()
		if logger.Enabled() {
			logger.Info("Audit rule would change object", "key", key.String(), "rule", a.Rule, "change", summary)
		}
		c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "AuditWouldChange", "Audit", "Rule %s (audit mode) would change %s", a.Rule, summary)
	}
}
