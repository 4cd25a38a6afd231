package admission

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// Requirement is what admission policies need of the API server. v1beta1
// is not used: 1.34 and 1.35 serve it only with the MutatingAdmissionPolicy
// feature gate and its runtime-config both turned on, which managed
// clusters do not offer.
const Requirement = "MutatingAdmissionPolicy in admissionregistration.k8s.io/v1, which Kubernetes 1.36 and later serve " +
	"(1.34 and 1.35: only v1beta1, off by default, not used)"

// Discovery is what ServerNote asks the API server: a discovery client.
type Discovery interface {
	discovery.ServerResourcesInterfaceWithContext
	discovery.ServerVersionInterfaceWithContext
}

// ServerNote asks dc whether the API server serves the admission
// policies' API. It returns "" if it does; else two lines, for the admission
// and check commands, that say from which Kubernetes version the policies
// are served, which version this server is, and what that means for the
// controller asked to keep them, as setting asks it (the command line's
// "run --admission-policies"; "" words it without). An error means that
// the server could not be asked.
func ServerNote(ctx context.Context, dc Discovery, setting string) (string, error) {
	gv := admissionregistrationv1.SchemeGroupVersion.String()
	list, err := dc.ServerResourcesForGroupVersionWithContext(ctx, gv)
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("discover %s: %w", gv, err)
	}
	if list != nil {
		for _, r := range list.APIResources {
			if r.Name == "mutatingadmissionpolicies" {
				return "", nil
			}
		}
	}
	server := "this API server"
	if v, err := dc.ServerVersionWithContext(ctx); err == nil && v.GitVersion != "" {
		server += " (" + v.GitVersion + ")"
	}
	kept := "the controller keeps every rule instead, writing objects right after they are created."
	if setting != "" {
		kept = setting + " leaves every rule to the controller, which writes objects right after they are created."
	}
	return fmt.Sprintf("warning: admission policies need %s; %s does not serve it.\n"+
		"warning: it refuses the policies; %s", Requirement, server, kept), nil
}

// ServerNoteFor is ServerNote of the API server at cfg, asked through a
// discovery client of its own, or, when it cannot be asked, a warning
// that says so; "" with no cfg (offline).
func ServerNoteFor(ctx context.Context, cfg *rest.Config, setting string) string {
	if cfg == nil {
		return ""
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	note := ""
	if err == nil {
		note, err = ServerNote(ctx, dc, setting)
	}
	if err != nil {
		note = "warning: could not ask whether the API server serves admission policies: " + err.Error()
	}
	return note
}
