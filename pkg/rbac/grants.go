package rbac

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// A Grant is where the controller needs the ResourceVerbs on one ruled
// resource: the Watched verbs cluster-wide, as its informer lists and
// watches every namespace; the Written verbs in Namespaces only, or
// cluster-wide when Namespaces is nil.
type Grant struct {
	Resource schema.GroupResource
	// Namespaces are the namespaces, sorted, that every rule naming the
	// resource is confined to (ConfinedTo); nil when one rule is not,
	// or the resource is not namespaced.
	Namespaces []string
}

// Grants returns the grant of every resource the rules of file name,
// sorted by group and resource; resolved maps each name as written to its
// resource (a name it lacks is left out).
func Grants(file *rulefile.File, resolved map[string]source.Resource) []Grant {
	type grant struct {
		namespaces map[string]bool
		cluster    bool
	}
	byResource := map[schema.GroupResource]*grant{}
	for i := range file.Rules {
		rule := &file.Rules[i]
		for _, name := range rule.Resources {
			res, ok := resolved[name]
			if !ok {
				continue
			}
			gr := res.GVR.GroupResource()
			g := byResource[gr]
			if g == nil {
				g = &grant{namespaces: map[string]bool{}}
				byResource[gr] = g
			}
			ns, confined := ConfinedTo(rule)
			g.cluster = g.cluster || !confined || !res.Namespaced
			for _, n := range ns {
				g.namespaces[n] = true
			}
		}
	}
	out := make([]Grant, 0, len(byResource))
	for gr, g := range byResource {
		gt := Grant{Resource: gr}
		if !g.cluster {
			gt.Namespaces = slices.Sorted(maps.Keys(g.namespaces))
		}
		out = append(out, gt)
	}
	slices.SortFunc(out, func(a, b Grant) int {
		return cmp.Or(strings.Compare(a.Resource.Group, b.Resource.Group), strings.Compare(a.Resource.Resource, b.Resource.Resource))
	})
	return out
}

// ConfinedTo returns the namespaces rule selects objects in, and true,
// when its namespaces field names them all literally; false when it has
// none or one is a glob (*, ?, [a-z], or an escape), which may match a
// namespace created later. excludeNamespaces and namespaceSelector only
// narrow a selection: they confine nothing by themselves.
func ConfinedTo(rule *rulefile.Rule) ([]string, bool) {
	if len(rule.Namespaces) == 0 {
		return nil, false
	}
	for _, ns := range rule.Namespaces {
		if strings.ContainsAny(ns, `*?[\`) {
			return nil, false
		}
	}
	return rule.Namespaces, true
}

// watchesNamespaces reports whether the controller watches namespaces for
// the rules, asking rules.NeedsNamespaces of each resource a rule names, as
// the controller asks it of each target.
func watchesNamespaces(file *rulefile.File, resolved map[string]source.Resource) bool {
	for _, rule := range file.Rules {
		for _, name := range rule.Resources {
			if rules.NeedsNamespaces(resolved[name].Namespaced, rule.NamespaceSelector != "") {
				return true
			}
		}
	}
	return false
}

// relatedResources returns the resources of the related objects that the
// rules read values from (fromNode: nodes; fromOwner: each owner resource
// walked through that resolved maps; fromRef: each resource read, but
// those read only by name, refNamedRules), which the controller lists
// and watches.
func relatedResources(file *rulefile.File, resolved map[string]source.Resource) []schema.GroupResource {
	var srcs []*source.Source
	for _, r := range file.Rules {
		srcs = source.Union(srcs, r.RelatedSources())
		for _, name := range r.OwnerResources() {
			if res, ok := resolved[name]; ok {
				srcs = source.Union(srcs, []*source.Source{source.OwnerOf(res)})
			}
		}
	}
	for _, src := range refSources(file, resolved) {
		if src.Named == "" {
			srcs = source.Union(srcs, []*source.Source{src})
		}
	}
	var out []schema.GroupResource
	for _, src := range srcs {
		if src != source.Owner && src != source.Ref && !slices.Contains(out, src.Resource.GVR.GroupResource()) {
			out = append(out, src.Resource.GVR.GroupResource())
		}
	}
	return out
}

// An Access is a verb on a resource's objects in a namespace ("" for all
// namespaces, or for a resource that is not namespaced).
type Access struct {
	Verb, Namespace string
}

// Needs returns where the controller uses each of the ResourceVerbs on the
// objects of a resource that rule names, namespaced or not, when it runs
// limited to namespace ("" for all, run without -n): limited, everything
// in that namespace; else the Watched verbs in all namespaces and the
// Written ones in the namespaces rule is confined to (ConfinedTo), or in
// all. It is what Grants grants for a rule, as `check` asks it.
func Needs(rule *rulefile.Rule, namespaced bool, namespace string) []Access {
	if !namespaced {
		namespace = ""
	}
	confined, ok := ConfinedTo(rule)
	if namespace != "" || !namespaced || !ok {
		confined = []string{namespace}
	}
	var out []Access
	for _, v := range ResourceVerbs {
		if v.Scope == Watched {
			out = append(out, Access{Verb: v.Name, Namespace: namespace})
			continue
		}
		for _, ns := range confined {
			out = append(out, Access{Verb: v.Name, Namespace: ns})
		}
	}
	return out
}
