package admission

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// TemplatesSuffix ends the name of the policy that sets a podTemplates
// rule's keys in pod templates: "<field manager>.<rule>.pod-templates".
const TemplatesSuffix = ".pod-templates"

// workloads are the resources whose pod templates a podTemplates rule's
// policy writes at CREATE, all but CronJobs holding it at spec.template.
var workloads = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "batch", Version: "v1", Resource: "cronjobs"},
}

// CEL for the pod template of the admitted workload.
const (
	isCronJob = `request.resource.resource == "cronjobs"`
	// templateMeta is the template's metadata, {} where it has none.
	templateMeta = `(` + isCronJob + ` ? object.?spec.?jobTemplate.?spec.?template.?metadata : object.?spec.?template.?metadata).orValue({})`
	// templateLabels are the labels of the Pods the template makes.
	templateLabels = `(` + isCronJob + ` ? object.?spec.?jobTemplate.?spec.?template.?metadata.?labels : object.?spec.?template.?metadata.?labels).orValue({})`
	// templateRoot is the template itself, which a when condition written
	// for a Pod reads as its object: it has a Pod's metadata and spec.
	templateRoot = isCronJob + ` ? object.spec.jobTemplate.spec.template : object.spec.template`
)

// templatePolicy builds the policy and binding that set r's keys in the
// pod templates of the workloads created, or returns nil when r asks for
// none or none of its keys can go there. What admission sets on a Pod, it
// sets on a template, read from the template as from the Pod (onTemplate);
// what it leaves to the controller, a template does not get. Pods made from the template carry the Pod marker listing the
// keys, as a Pod admitted with them does, so that the controller counts
// them as its own without a write.
func (tr *translator) templatePolicy(r *rule) (*Policy, error) {
	if !r.PodTemplates || r.Audit() || r.When != "" && r.ReadsOwnerObject(r.When) {
		return nil, nil
	}
	var vars []admissionregistrationv1.Variable
	var added []string
	entries := map[string][]string{}
	for _, k := range r.keys {
		if why := tr.notTemplated(r, k); why != "" {
			tr.note(r, "podTemplates", fmt.Sprintf("%s is not set in pod templates: %s; the Pods get it as the rule says", k.field(), why))
			continue
		}
		val, err := onTemplate(k.val)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.field(), err)
		}
		v := fmt.Sprintf("v%d", len(vars))
		current := fmt.Sprintf("variables.template.?%ss[?%s]", k.kind, quote(k.name))
		cond := val.present
		if k.ifAbsent {
			cond += " && !" + current + ".hasValue()"
		}
		vars = append(vars, admissionregistrationv1.Variable{Name: v,
			Expression: fmt.Sprintf("(%s) ? optional.of(%s) : optional.none()", cond, val.text)})
		added = append(added, fmt.Sprintf(`(variables.%s.hasValue() && (!%s.hasValue() || %s.value() != variables.%s.value())) ? %s : ""`,
			v, current, current, v, quote(k.marked())))
		entries[k.kind] = append(entries[k.kind], fmt.Sprintf("?%s: variables.%s.hasValue() ? optional.of(string(variables.%s.value())) : optional.none()",
			quote(k.name), v, v))
	}
	if len(vars) == 0 {
		tr.note(r, "podTemplates", "no key of the rule can be set in a pod template: each is read from a source admission cannot read")
		return nil, nil
	}
	marker := quote(patch.MarkerKey(tr.opts.FieldManager, schema.GroupResource{Resource: "pods"}))
	vars = append([]admissionregistrationv1.Variable{{Name: "template", Expression: templateMeta}}, vars...)
	vars = append(vars, admissionregistrationv1.Variable{Name: "added", Expression: "[" + strings.Join(added, ", ") + `].filter(k, k != "")`})
	entries["annotation"] = append(entries["annotation"], fmt.Sprintf("?%s: variables.added.size() > 0 && "+
		`!variables.template.?annotations[?%s].orValue("").split(",").exists(e, e.trim().startsWith(%s) && e.trim() != %s) ? `+
		`optional.of((variables.template.?annotations[?%s].orValue("").split(",") + variables.added).filter(k, k != "").distinct().sort().join(",")) : optional.none()`,
		marker, marker, quote(patch.MarkerFormatPrefix), quote(patch.MarkerFormatPrefix+patch.MarkerFormat), marker))
	spec, err := tr.templateSpec(r, vars, entries)
	if err != nil {
		return nil, err
	}
	return tr.newPolicy(r, tr.opts.FieldManager+"."+r.Name+TemplatesSuffix, spec), nil
}

// onTemplate returns v, a value read from the admitted Pod, read from the
// admitted workload's pod template instead, as from a Pod: a template has
// a Pod's metadata and spec, but no name, status or the like, so a value
// read from those is not present (a JSONPath value), or fails the policy,
// which is then ignored (a CEL value).
func onTemplate(v value) (value, error) {
	present, err := celexpr.Rebase(v.present, templateRoot)
	if err != nil {
		return value{}, err
	}
	text, err := celexpr.Rebase(v.text, templateRoot)
	return value{present: present, text: text}, err
}

// notTemplated says why k, a key of r, is not set in pod templates, or
// returns "".
func (tr *translator) notTemplated(r *rule, k *key) string {
	if k.err != nil {
		return k.err.Error()
	}
	if k.param.name != "" {
		return "it is read from " + k.param.String() + ", which that policy does not read"
	}
	for _, e := range tr.rules {
		if e.Index >= r.Index {
			break
		}
		if _, shared := sharesResource(r, e); !shared || e.Audit() {
			continue
		}
		for _, set := range e.Of(k.kind).Copy {
			if set.Matches(k.name) {
				return "rule " + e.Name + ", earlier in the file, may copy it"
			}
		}
		for _, ek := range e.keys {
			if ek.kind == k.kind && ek.name == k.name && (ek.literal == nil || k.literal == nil || *ek.literal != *k.literal) {
				return "rule " + e.Name + ", earlier in the file, may set it"
			}
		}
	}
	return ""
}

// templateSpec is the spec of r's template policy: r's selection, its
// label selector read on the template's labels and its when condition on
// the template, at CREATE of a workload.
func (tr *translator) templateSpec(r *rule, vars []admissionregistrationv1.Variable, entries map[string][]string) (*admissionregistrationv1.MutatingAdmissionPolicySpec, error) {
	match, nsCEL, err := matchResources(r)
	if err != nil {
		return nil, err
	}
	match.ObjectSelector = nil // it selects Pods: the template's labels are read below
	match.ResourceRules = nil
	for _, gvr := range workloads {
		match.ResourceRules = append(match.ResourceRules, admissionregistrationv1.NamedRuleWithOperations{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{gvr.Group}, APIVersions: []string{gvr.Version},
					Resources: []string{gvr.Resource}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
			}})
	}
	conds, err := tr.globalConditions()
	if err != nil {
		return nil, err
	}
	conds = append(conds, admissionregistrationv1.MatchCondition{Name: "template-not-ignored", Expression: fmt.Sprintf(`!(%s.?annotations[?%s].orValue("") == "true")`, templateMeta, quote(rulefile.IgnoreAnnotation))})
	own, err := conditions(r.Compiled)
	if err != nil {
		return nil, err
	}
	when := ""
	if r.When != "" {
		if when, err = celexpr.Rebase(r.When, templateRoot); err != nil {
			return nil, fmt.Errorf("when: %w", err)
		}
		when = "(" + when + ")"
	}
	for _, c := range own {
		switch c.name {
		case "selector":
			if c.expr, err = selectorCEL(r.Selector, templateLabels); err != nil {
				return nil, err
			}
		case "when":
			c.expr = when
		}
		conds = append(conds, admissionregistrationv1.MatchCondition{Name: c.name, Expression: c.expr})
	}
	if r.OptOutLocked {
		conds = slices.DeleteFunc(conds, func(c admissionregistrationv1.MatchCondition) bool {
			return c.Name == notIgnored || c.Name == "template-not-ignored"
		})
	}
	cond := mutationCondition(r, nsCEL, when)
	var parts []string
	for _, kind := range []string{"annotation", "label"} {
		if len(entries[kind]) > 0 {
			parts = append(parts, fmt.Sprintf("%ss: {%s}", kind, strings.Join(entries[kind], ", ")))
		}
	}
	meta := strings.Join(parts, ", ")
	workload := fmt.Sprintf("%s && !(%s) ? Object{spec: Object.spec{template: Object.spec.template{metadata: Object.spec.template.metadata{%s}}}} : Object{}",
		cond, isCronJob, meta)
	cronJob := fmt.Sprintf("%s && %s ? Object{spec: Object.spec{jobTemplate: Object.spec.jobTemplate{spec: Object.spec.jobTemplate.spec{"+
		"template: Object.spec.jobTemplate.spec.template{metadata: Object.spec.jobTemplate.spec.template.metadata{%s}}}}}} : Object{}", cond, isCronJob, meta)
	return policySpec(match, conds, vars, []string{workload, cronJob}), nil
}
