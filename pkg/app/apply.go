package app

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/policysync"
	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/reloader"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// applyChain returns what puts rules in force, what keeps it repaired
// until its context ends, and what /readyz adds about it. Without
// admission policies, that is the controller's setRules alone. With them,
// in this order: every ruled resource is recorded in rec, for the policies
// write to it as objects are created, not through the controller's writer,
// and the record must list a resource before the first write to it; then
// the policies are synced (through cs, as the controller's field manager),
// their state reported to reg; then setRules.
func applyChain(cfg Config, cs kubernetes.Interface, rec *record.Record, setRules policysync.ApplyFunc, reg prometheus.Registerer) (policysync.ApplyFunc, func(context.Context), func() []string) {
	if !cfg.AdmissionPolicies {
		return setRules, func(context.Context) {}, func() []string { return nil }
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
	return recordRuled(rec, syncer.Wrap(setRules)), syncer.Run, admissionStatus(syncer, reg)
}

// admissionStatus reports the state of syncer's last sync to reg, one
// series of kube_annotator_admission_policies_state per state, 1 for the
// current one, and returns what /readyz adds while the API server does not
// serve the policies' API.
func admissionStatus(syncer *policysync.Syncer, reg prometheus.Registerer) func() []string {
	for _, st := range []policysync.State{policysync.Pending, policysync.Synced, policysync.Failed, policysync.NotServed} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "kube_annotator", Name: "admission_policies_state",
			Help: "1 for the state of the last sync of the admission policies: pending, synced, failed (retried soon) " +
				"or not-served (the API server does not serve MutatingAdmissionPolicy v1; the controller enforces every rule).",
			ConstLabels: prometheus.Labels{"state": st.String()},
		}, func() float64 {
			if syncer.State() == st {
				return 1
			}
			return 0
		}))
	}
	return func() []string {
		if syncer.State() == policysync.NotServed {
			return []string{"admission policies not installed: " + policysync.ErrNotServed.Error()}
		}
		return nil
	}
}

// recordRuled returns next preceded by recording every resource that set
// rules.
func recordRuled(rec *record.Record, next policysync.ApplyFunc) policysync.ApplyFunc {
	return func(ctx context.Context, set *rules.Set) {
		for _, t := range set.SortedTargets() {
			if err := rec.Ensure(ctx, t.GVR.GroupResource()); err != nil {
				klog.FromContext(ctx).Error(err, "Cannot record a resource the admission policies write to; keys they set there may be left when no rule names it",
					"resource", source.GVRString(t.GVR))
			}
		}
		next(ctx, set)
	}
}

// changeGuard holds a reload of the rules that would change more than max
// objects, as counted in the controller's caches by preview; max 0 holds
// none. Objects of resources the caches do not hold (newly ruled by the
// reload) are not counted: only known counts hold a reload. setting names
// max in the error, as the user sets it.
func changeGuard(max int, setting string, preview func(*rules.Set) controller.Preview) reloader.Guard {
	if max == 0 {
		return func(context.Context, *rules.Set) error { return nil }
	}
	return func(_ context.Context, set *rules.Set) error {
		p := preview(set)
		if p.Total <= max {
			return nil
		}
		err := &reloader.TooManyChanges{Total: p.Total, PerRule: p.PerRule, Limit: max, Setting: setting}
		for _, gvr := range p.Unknown {
			err.Uncounted = append(err.Uncounted, source.GVRString(gvr))
		}
		return err
	}
}
