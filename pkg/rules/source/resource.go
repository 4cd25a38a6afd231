package source

import "k8s.io/apimachinery/pkg/runtime/schema"

// Resource is a resource name from a rules file, resolved through discovery.
type Resource struct {
	// GVR is the resource the API server serves, at its preferred version.
	GVR schema.GroupVersionResource
	// Kind is the kind of the resource's objects at that version. The
	// metadata-only cache does not carry it, and writes and events need it.
	Kind string
	// Namespaced is false for cluster-scoped resources such as namespaces.
	Namespaced bool
}

// GVRString formats a GVR the way kubectl names it: "deployments.v1.apps",
// or "pods.v1" in the core group.
func GVRString(gvr schema.GroupVersionResource) string {
	s := gvr.Resource + "." + gvr.Version
	if gvr.Group != "" {
		s += "." + gvr.Group
	}
	return s
}
