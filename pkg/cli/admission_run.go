package cli

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	"github.com/kube-annotator/kube-annotator/pkg/policysync"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// admissionSync is what run --admission-policies adds to the controller:
// the syncer that keeps the admission policies equal to the rules in
// force, ahead of the controller. Without the flag it does nothing.
type admissionSync struct {
	syncer *policysync.Syncer // nil without --admission-policies
}

// newAdmissionSync returns run's admissionSync, which writes as the
// controller's field manager.
func newAdmissionSync(f runFlags, cfg *rest.Config) (*admissionSync, error) {
	if !f.admissionPolicies {
		return &admissionSync{}, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	manager := f.record.fieldManager
	opts := admission.Options{FieldManager: manager, ExcludeNamespaces: f.clusterFlags.exclude, Namespace: f.clusterFlags.namespace()}
	return &admissionSync{syncer: policysync.New(policysync.Options{
		Client:       cs.AdmissionregistrationV1(),
		FieldManager: manager,
		Translate: func(set *rules.Set) ([]admission.Policy, []admission.Note, error) {
			return admission.Translate(set, opts)
		},
	})}, nil
}

// wrap returns the function that puts rules in force: the policies first,
// then next (the controller's SetRules).
func (a *admissionSync) wrap(next policysync.ApplyFunc) policysync.ApplyFunc {
	if a.syncer == nil {
		return next
	}
	return a.syncer.Wrap(next)
}

// run repairs and retries the policies' sync until ctx ends.
func (a *admissionSync) run(ctx context.Context) {
	if a.syncer != nil {
		a.syncer.Run(ctx)
	}
}

// What run --admission-policies does with admission policies: lists its
// own (by label), applies them (server-side apply creates or patches) and
// deletes those no rule asks for.
var (
	admissionResources = []string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"}
	admissionVerbs     = []string{"list", "create", "patch", "delete"}
)

// admissionWarning is what rbac --admission-policies says of the grant.
const admissionWarning = "warning: --admission-policies lets the ServiceAccount create MutatingAdmissionPolicies, with which the API server " +
	"changes any object it admits: bind it only where whoever controls the rules file may change any object of the cluster"

// validateAdmission reports, naming the flag, a field manager that cannot
// name the admission policies that --admission-policies keeps.
func (f *runFlags) validateAdmission() error {
	if !f.admissionPolicies {
		return nil
	}
	if err := admission.ValidateFieldManager(f.record.fieldManager); err != nil {
		return fmt.Errorf("--field-manager: %w", err)
	}
	return nil
}
