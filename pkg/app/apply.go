package app

import (
	"context"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/policysync"
	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/reloader"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// applyChain returns what puts rules in force, and what keeps it repaired
// until its context ends. Without admission policies, that is the
// controller's setRules alone. With them, in this order: every ruled
// resource is recorded in rec, for the policies write to it as objects are
// created, not through the controller's writer, and the record must list a
// resource before the first write to it; then the policies are synced
// (through cs, as the controller's field manager); then setRules.
func applyChain(cfg Config, cs kubernetes.Interface, rec *record.Record, setRules policysync.ApplyFunc) (policysync.ApplyFunc, func(context.Context)) {
	if !cfg.AdmissionPolicies {
		return setRules, func(context.Context) {}
	}
	manager := cfg.Record.FieldManager
	opts := admission.Options{FieldManager: manager, ExcludeNamespaces: cfg.ExcludeNamespaces, Namespace: cfg.Namespace}
	syncer := policysync.New(policysync.Options{
		Client:       cs.AdmissionregistrationV1(),
		FieldManager: manager,
		Translate: func(set *rules.Set) ([]admission.Policy, []admission.Note, error) {
			return admission.Translate(set, opts)
		},
	})
	return recordRuled(rec, syncer.Wrap(setRules)), syncer.Run
}

// recordRuled returns next preceded by recording every resource that set
// rules.
func recordRuled(rec *record.Record, next policysync.ApplyFunc) policysync.ApplyFunc {
	return func(ctx context.Context, set *rules.Set) {
		for _, t := range set.SortedTargets() {
			if err := rec.Ensure(ctx, t.GVR.GroupResource()); err != nil {
				klog.FromContext(ctx).Error(err, "Cannot record a resource the admission policies write to; keys they set there may be left when no rule names it",
					"resource", rules.GVRString(t.GVR))
			}
		}
		next(ctx, set)
	}
}

// changeGuard holds a reload of the rules that would change more than max
// objects, as counted in the controller's caches by preview; max 0 holds
// none. Objects of resources the caches do not hold (newly ruled by the
// reload) are not counted: only known counts hold a reload.
func changeGuard(max int, preview func(*rules.Set) controller.Preview) reloader.Guard {
	if max == 0 {
		return func(context.Context, *rules.Set) error { return nil }
	}
	return func(_ context.Context, set *rules.Set) error {
		p := preview(set)
		if p.Total <= max {
			return nil
		}
		err := &reloader.TooManyChanges{Total: p.Total, PerRule: p.PerRule, Limit: max}
		for _, gvr := range p.Unknown {
			err.Uncounted = append(err.Uncounted, rules.GVRString(gvr))
		}
		return err
	}
}
