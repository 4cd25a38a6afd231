package rbac

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// refSources returns the sources of the objects that the fromRef keys of
// the rules of file read, whose resources resolved maps, as the
// controller watches them (source.NewRefer): of every object of a
// resource, or only of the names a rule gives.
func refSources(file *rulefile.File, resolved map[string]source.Resource) []*source.Source {
	var out []*source.Source
	for _, r := range file.Rules {
		for _, k := range r.RefKeys() {
			if res, ok := resolved[k.Refs.Resource]; ok {
				out = source.Union(out, source.NewRefer(res, k.Refs.Field, k.Refs.Name, k.Refs.Names).Sources)
			}
		}
	}
	return out
}

// refNamedRules grants reading the objects that fromRef reads only by
// name — the ConfigMaps a rule names — by their names: the controller
// lists and watches each through the field selector metadata.name, which
// RBAC authorizes by resourceNames. A resource it reads every object of
// (relatedResources) or rules (ruled, by group) needs none.
func refNamedRules(file *rulefile.File, resolved map[string]source.Resource, ruled map[string][]string) []*rbacv1ac.PolicyRuleApplyConfiguration {
	names := map[source.Resource][]string{}
	every := relatedResources(file, resolved)
	for _, src := range refSources(file, resolved) {
		gr := src.Resource.GVR.GroupResource()
		if src.Named == "" || slices.Contains(every, gr) || slices.Contains(ruled[gr.Group], gr.Resource) {
			continue
		}
		if !slices.Contains(names[src.Resource], src.Named) {
			names[src.Resource] = append(names[src.Resource], src.Named)
		}
	}
	var out []*rbacv1ac.PolicyRuleApplyConfiguration
	for _, res := range slices.SortedFunc(maps.Keys(names), func(a, b source.Resource) int {
		return strings.Compare(source.GVRString(a.GVR), source.GVRString(b.GVR))
	}) {
		gr := res.GVR.GroupResource()
		out = append(out, policyRule(gr.Group, []string{gr.Resource}, readOnlyVerbs...).WithResourceNames(slices.Sorted(slices.Values(names[res]))...))
	}
	return out
}

// paramRules grants getting, by their names, the objects that fromRef
// reads by name alone ({fromRef: {resource: configmaps, name: NAME, …}}),
// for run --admission-policies: a policy reads such a ConfigMap as its
// params, and the API server lets only who may get the object a
// binding's paramRef names, in every namespace, create the binding. The
// controller lists and watches those objects already (refNamedRules, or
// as a ruled resource), so get shows it nothing more.
func paramRules(file *rulefile.File, resolved map[string]source.Resource) []*rbacv1ac.PolicyRuleApplyConfiguration {
	names := map[source.Resource][]string{}
	for _, src := range refSources(file, resolved) {
		if src.Ref == nil && src.Named != "" && !slices.Contains(names[src.Resource], src.Named) {
			names[src.Resource] = append(names[src.Resource], src.Named)
		}
	}
	var out []*rbacv1ac.PolicyRuleApplyConfiguration
	for _, res := range slices.SortedFunc(maps.Keys(names), func(a, b source.Resource) int {
		return strings.Compare(source.GVRString(a.GVR), source.GVRString(b.GVR))
	}) {
		gr := res.GVR.GroupResource()
		out = append(out, policyRule(gr.Group, []string{gr.Resource}, "get").WithResourceNames(slices.Sorted(slices.Values(names[res]))...))
	}
	return out
}

// GroupResources maps each resource name to its group and resource.
func GroupResources(resolved map[string]source.Resource) map[string]schema.GroupResource {
	out := make(map[string]schema.GroupResource, len(resolved))
	for name, res := range resolved {
		out[name] = res.GVR.GroupResource()
	}
	return out
}
