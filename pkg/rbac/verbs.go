package rbac

import "slices"

// Scope says where the controller uses a verb on a ruled resource.
type Scope int

const (
	// Watched verbs are those of the resource's informer, which lists
	// and watches the objects of every namespace (or of run's -n only).
	Watched Scope = iota
	// Written verbs are used only on the objects the controller writes:
	// where the rules select objects, or it set keys before.
	Written
)

// A Verb is what the controller does with the objects of a ruled resource,
// and where.
type Verb struct {
	Name  string
	Scope Scope
}

// ResourceVerbs are the verbs the controller uses on a ruled resource, in
// the order rbac grants them: its informer lists and watches; a sync
// patches; and, once per fight it reports with another writer, it gets the
// object, whose managedFields the cache does not keep, to name the other
// field manager.
var ResourceVerbs = []Verb{
	{Name: "get", Scope: Written},
	{Name: "list", Scope: Watched},
	{Name: "watch", Scope: Watched},
	{Name: "patch", Scope: Written},
}

// Verbs returns the names of the ResourceVerbs of the scopes given, in
// their order; all of them when none is given.
func Verbs(scopes ...Scope) []string {
	var out []string
	for _, v := range ResourceVerbs {
		if len(scopes) == 0 || slices.Contains(scopes, v.Scope) {
			out = append(out, v.Name)
		}
	}
	return out
}

// What run does besides with the ruled resources: it lists and watches
// namespaces (their labels and opt-outs) and the related objects rules read
// values from; creates and patches Events (--events); lists its own
// MutatingAdmissionPolicies and bindings (by label), applies them
// (server-side apply creates or patches) and deletes those no rule asks for
// (--admission-policies).
var (
	readOnlyVerbs      = []string{"list", "watch"}
	eventVerbs         = []string{"create", "patch"}
	admissionResources = []string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"}
	admissionVerbs     = []string{"list", "create", "patch", "delete"}
	reportVerbs        = []string{"list", "create", "patch", "delete"}
)
