package admission

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// paramKinds are the resources whose objects a policy reads as its
// params: an object named by name ({fromRef: {resource: configmaps, name:
// NAME, data: KEY}}) in the admitted object's namespace. Each entry is
// only data; one mechanism (paramOf, policyFor) serves them all.
var paramKinds = map[schema.GroupResource]admissionregistrationv1.ParamKind{
	{Resource: "configmaps"}: {APIVersion: "v1", Kind: "ConfigMap"},
}

// paramFields are the CEL maps of params that hold the keys of each kind
// a fromRef reads.
var paramFields = map[string]string{
	rulefile.DataKind:       "params.?data",
	rulefile.LabelKind:      "params.?metadata.?labels",
	rulefile.AnnotationKind: "params.?metadata.?annotations",
}

// param is the object a policy reads as its params: the object of
// resource named name in the admitted object's namespace. The zero param
// is none: the policy reads the object alone.
type param struct {
	resource schema.GroupResource
	name     string
}

// String is "ConfigMap \"team-defaults\"".
func (p param) String() string {
	return fmt.Sprintf("%s %q", paramKinds[p.resource].Kind, p.name)
}

// suffix ends the name of the policy that reads p: ".configmaps.NAME".
func (p param) suffix() string {
	if p.name == "" {
		return ""
	}
	return "." + p.resource.Resource + "." + p.name
}

// paramOf returns the param that k, a fromRef key, reads, and the value
// of it in CEL; ok is false when no policy can read k as params: k reads
// an object named by a field, or of a resource paramKinds lacks.
func paramOf(k rulefile.RelatedKey) (p param, v value, ok bool) {
	if k.Refs == nil || k.Refs.Field != nil || k.Refs.Name == "" {
		return param{}, value{}, false
	}
	res, found := source.RefResourceNamed(k.Refs.Resource)
	field, read := paramFields[k.Kind]
	if _, kind := paramKinds[res.GroupResource]; !found || !kind || !read {
		return param{}, value{}, false
	}
	// params is dyn: string() types the value for the functions that
	// check it (bytes(), matches()), which dyn does not select at runtime.
	entry := fmt.Sprintf("%s[?%s]", field, quote(k.Key))
	return param{res.GroupResource, k.Refs.Name}, value{present: entry + ".hasValue()", text: "string(" + entry + ".value())"}, true
}

// params returns the params r's keys read, the zero param (none) first,
// then by resource and name.
func params(r *rule) []param {
	out := []param{{}}
	for _, k := range r.keys {
		if !slices.Contains(out, k.param) {
			out = append(out, k.param)
		}
	}
	slices.SortFunc(out[1:], func(a, b param) int {
		return strings.Compare(a.resource.String()+"/"+a.name, b.resource.String()+"/"+b.name)
	})
	return out
}

// errClusterScoped is why a value read from an object in the object's
// namespace is not set at admission on a rule's cluster-scoped objects.
func errClusterScoped(p param) error {
	return fmt.Errorf("read from %s in the object's namespace, which a cluster-scoped object lacks", p)
}

// scopeParams leaves to the controller the keys r reads as params when
// none of r's resources is namespaced: its objects have no namespace to
// read them in. (A rules file refuses such a rule; this is the guard.)
func (r *rule) scopeParams() {
	for _, k := range r.keys {
		if k.param.name != "" && len(r.namespaced) == 0 {
			k.err, k.param = errClusterScoped(k.param), param{}
		}
	}
}

// readParams makes spec, of the policy that sets r's keys read from p,
// read p as its params, on r's namespaced resources alone: a binding
// whose paramRef gives no namespace reads p in the admitted object's
// namespace, and fails on a cluster-scoped object. It notes the keys that
// are left to the controller on r's cluster-scoped resources, and returns
// false when the policy name is too long.
func (tr *translator) readParams(r *rule, p param, name string, keys []*key, spec *admissionregistrationv1.MutatingAdmissionPolicySpec) bool {
	if len(name) > validation.DNS1123SubdomainMaxLength {
		for _, k := range keys {
			tr.note(r, k.field(), fmt.Sprintf("read from %s, whose policy %s would be named with more than %d characters; the controller sets it",
				p, name, validation.DNS1123SubdomainMaxLength))
		}
		return false
	}
	kind := paramKinds[p.resource]
	spec.ParamKind = &kind
	spec.MatchConstraints.ResourceRules = slices.DeleteFunc(spec.MatchConstraints.ResourceRules, func(rr admissionregistrationv1.NamedRuleWithOperations) bool {
		return !slices.Contains(r.namespaced, schema.GroupResource{Group: rr.APIGroups[0], Resource: rr.Resources[0]})
	})
	for i := range spec.MatchConstraints.ResourceRules {
		spec.MatchConstraints.ResourceRules[i].Scope = ptr.To(admissionregistrationv1.NamespacedScope)
	}
	var cluster []string
	for _, gvr := range r.resources {
		if !slices.Contains(r.namespaced, gvr.GroupResource()) {
			cluster = append(cluster, gvr.GroupResource().String())
		}
	}
	if len(cluster) > 0 {
		for _, k := range keys {
			tr.note(r, k.field(), fmt.Sprintf("on %s: %v; the controller sets it", strings.Join(cluster, ", "), errClusterScoped(p)))
		}
	}
	return true
}

// paramRef is the binding's reference to p: in the admitted object's
// namespace; where there is none, the policy is skipped (the request is
// allowed as it is), and the controller sets the keys.
func paramRef(p param) *admissionregistrationv1.ParamRef {
	return &admissionregistrationv1.ParamRef{Name: p.name, ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)}
}
