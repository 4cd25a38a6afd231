package rules

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource is a resource name from a rules file, resolved through discovery.
type Resource struct {
	// GVR is the resource the API server serves, at its preferred version.
	GVR schema.GroupVersionResource
	// Namespaced is false for cluster-scoped resources such as namespaces.
	Namespaced bool
}

// ResolveFunc resolves a resource name as written in a rules file.
type ResolveFunc func(name string) (Resource, error)

// Target is everything the rules want of one resource.
type Target struct {
	Resource
	// Rules names the rules that target the resource, in file order.
	Rules []string
	// Annotations is the union of the annotations those rules set.
	Annotations map[string]string
}

// Set is a rules file compiled against the resources the cluster serves:
// what to enforce, by resource.
type Set struct {
	// Targets holds one entry per resolved resource.
	Targets map[schema.GroupVersionResource]*Target
}

// SortedTargets returns the targets ordered by group, then resource, so that
// logs and output are stable.
func (s *Set) SortedTargets() []*Target {
	out := make([]*Target, 0, len(s.Targets))
	for _, t := range s.Targets {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].GVR, out[j].GVR
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Resource < b.Resource
	})
	return out
}

// Compile resolves every rule's resources and merges, per resource, what the
// rules want. Names that do not resolve are returned as unresolved, one
// FieldError each, and left out of the set so that the rest can still be
// enforced. Two rules that set the same annotation on the same resource to
// different values are a conflict: Compile then returns an *Error naming both.
func Compile(name string, f *File, resolve ResolveFunc) (set *Set, unresolved []FieldError, err error) {
	set = &Set{Targets: map[schema.GroupVersionResource]*Target{}}
	// Keyed by group and resource: two names for one resource at two
	// versions are the same objects, enforced at the first version named.
	byGR := map[schema.GroupResource]*Target{}
	owner := map[schema.GroupResource]map[string]int{} // key → index of the rule that set it
	var conflicts []FieldError
	for i, r := range f.Rules {
		for j, res := range r.Resources {
			rr, rerr := resolve(res)
			if rerr != nil {
				unresolved = append(unresolved, FieldError{
					Field:   fmt.Sprintf("rules[%d].resources[%d]", i, j),
					Message: rerr.Error(),
				})
				continue
			}
			gr := rr.GVR.GroupResource()
			t := byGR[gr]
			if t == nil {
				t = &Target{Resource: rr, Annotations: map[string]string{}}
				byGR[gr] = t
				set.Targets[rr.GVR] = t
				owner[gr] = map[string]int{}
			}
			if len(t.Rules) == 0 || t.Rules[len(t.Rules)-1] != r.Name {
				t.Rules = append(t.Rules, r.Name)
			}
			for _, k := range sortedKeys(r.Annotations) {
				v := r.Annotations[k]
				if prev, ok := owner[gr][k]; ok && t.Annotations[k] != v {
					conflicts = append(conflicts, FieldError{
						Field: fmt.Sprintf("rules[%d].annotations.%s", i, k),
						Message: fmt.Sprintf("conflicts with rules[%d] (%s): both set it on %s, to %q and %q",
							prev, f.Rules[prev].Name, GVRString(t.GVR), v, t.Annotations[k]),
					})
					continue
				}
				owner[gr][k] = i
				t.Annotations[k] = v
			}
		}
	}
	if len(conflicts) > 0 {
		return nil, unresolved, &Error{File: name, Fields: conflicts}
	}
	return set, unresolved, nil
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

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
