package admission

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// CEL expressions for what the admitted object's selection reads.
const (
	// objectName is "" for an object created with generateName: its name
	// is chosen after admission.
	objectName   = `object.metadata.?name.orValue("")`
	objectLabels = `object.metadata.?labels.orValue({})`
	// namespaceLabels are the labels of the object's namespace, or of the
	// Namespace itself (for which request.namespace is its own name and
	// namespaceObject is null), as the controller reads them.
	namespaceLabels = `(namespaceObject == null ? ` + objectLabels + ` : namespaceObject.metadata.?labels.orValue({}))`
	// clusterScoped holds for objects that are in no namespace: namespace
	// criteria do not apply to them.
	clusterScoped = `request.namespace == ""`
	isNamespace   = `(request.resource.group == "" && request.resource.resource == "namespaces")`
)

// optsOut is a CEL condition: the object expression obj carries
// rulefile.IgnoreAnnotation: "true".
func optsOut(obj string) string {
	return fmt.Sprintf(`(%s.metadata.?annotations[?%s].orValue("") == "true")`, obj, quote(rulefile.IgnoreAnnotation))
}

// condition is one named CEL condition of a rule's selection.
type condition struct{ name, expr string }

// conditions are the CEL conditions of c's selection, except its
// namespaceSelector (whose CEL reads namespaceObject, which
// matchConditions do not see).
func conditions(c *rules.Compiled) ([]condition, error) {
	var out []condition
	if len(c.Names) > 0 {
		m, err := anyGlob(objectName, c.Names)
		if err != nil {
			return nil, err
		}
		out = append(out, condition{"names", fmt.Sprintf(`(%s != "" && %s)`, objectName, m)})
	}
	if len(c.Namespaces) > 0 {
		m, err := anyGlob("request.namespace", c.Namespaces)
		if err != nil {
			return nil, err
		}
		out = append(out, condition{"namespaces", fmt.Sprintf("(%s || %s)", clusterScoped, m)})
	}
	if len(c.ExcludeNamespaces) > 0 {
		m, err := anyGlob("request.namespace", c.ExcludeNamespaces)
		if err != nil {
			return nil, err
		}
		out = append(out, condition{"exclude-namespaces", fmt.Sprintf("(%s || !%s)", clusterScoped, m)})
	}
	if c.Selector != "" {
		s, err := selectorCEL(c.Selector, objectLabels)
		if err != nil {
			return nil, err
		}
		out = append(out, condition{"selector", s})
	}
	if c.When != "" && !c.WhenReadsNamespace() {
		out = append(out, condition{"when", "(" + c.When + ")"})
	}
	return out, nil
}

// namespaceSelection is the CEL condition of c's namespaceSelector.
func namespaceSelection(c *rules.Compiled) (string, error) {
	s, err := selectorCEL(c.NamespaceSelector, namespaceLabels)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("(%s || %s)", clusterScoped, s), nil
}

// selects is the CEL condition that c selects the admitted object.
func selects(c *rules.Compiled) (string, error) {
	conds, err := conditions(c)
	if err != nil {
		return "", err
	}
	terms := []string{"true"}
	for _, cond := range conds {
		terms = append(terms, cond.expr)
	}
	if c.NamespaceSelector != "" {
		ns, err := namespaceSelection(c)
		if err != nil {
			return "", err
		}
		terms = append(terms, ns)
	}
	if c.WhenReadsNamespace() {
		terms = append(terms, "("+c.When+")")
	}
	return "(" + strings.Join(terms, " && ") + ")", nil
}

// notIgnored names the matchCondition that leaves out objects that opt out.
const notIgnored = "not-ignored"

// globalConditions are the matchConditions every policy has: the excluded
// namespaces and the namespace the controller is restricted to.
func (tr *translator) globalConditions() ([]admissionregistrationv1.MatchCondition, error) {
	out := []admissionregistrationv1.MatchCondition{{Name: notIgnored, Expression: "!" + optsOut("object")}}
	if len(tr.opts.ExcludeNamespaces) > 0 {
		m, err := anyGlob("request.namespace", tr.opts.ExcludeNamespaces)
		if err != nil {
			return nil, fmt.Errorf("excluded namespaces: %w", err)
		}
		out = append(out, admissionregistrationv1.MatchCondition{Name: "not-excluded", Expression: fmt.Sprintf("%s || !%s", clusterScoped, m)})
	}
	if ns := tr.opts.Namespace; ns != "" {
		out = append(out, admissionregistrationv1.MatchCondition{Name: "in-namespace",
			Expression: fmt.Sprintf("%s || %s || request.namespace == %s", clusterScoped, isNamespace, quote(ns))})
	}
	return out, nil
}

// policies builds r's policies and bindings: one for what r sets from the
// object, then one per object r reads values from as params (policyFor);
// none when nothing of r is done at admission.
func (tr *translator) policies(r *rule) ([]Policy, error) {
	if r.Audit() {
		tr.note(r, "mode", "audit mode writes nothing, at admission neither; the controller reports what the rule would change")
		return nil, nil
	}
	if r.When != "" && r.ReadsOwnerObject(r.When) {
		tr.note(r, "when", errOwnerObject.Error()+": the controller enforces the whole rule")
		return nil, nil
	}
	if len(r.Annotations.Remove) > 0 {
		tr.note(r, "removeAnnotations", removalReason)
	}
	if len(r.Labels.Remove) > 0 {
		tr.note(r, "removeLabels", removalReason)
	}
	var out []Policy
	for _, p := range params(r) {
		var copies []copy
		if p.name == "" {
			copies = tr.copies(r) // they read the object alone
		}
		policy, err := tr.policyFor(r, p, copies)
		if err != nil {
			return nil, err
		}
		if policy != nil {
			out = append(out, *policy)
		}
	}
	if len(out) == 0 {
		tr.note(r, "", "nothing is set at admission; the controller enforces the whole rule")
		return nil, nil
	}
	if len(r.Names) > 0 {
		tr.note(r, "names", "objects created with generateName (a ReplicaSet's Pods, say) have no name at admission; the controller annotates them after creation")
	}
	return out, nil
}

// policyFor builds the policy and binding that set r's keys read from p
// (from the object, for the zero param) and copies, or returns nil when
// none of them is set at admission. The policy that reads p is named
// "<field manager>.<rule>.<resource>.<name>" and its binding refers to p.
func (tr *translator) policyFor(r *rule, p param, copies []copy) (*Policy, error) {
	keys := slices.DeleteFunc(slices.Clone(r.keys), func(k *key) bool { return k.param != p })
	vars, entries, err := tr.values(r, keys, copies)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 && len(copies) == 0 {
		return nil, nil
	}
	spec, err := tr.spec(r, vars, entries, copies)
	if err != nil {
		return nil, err
	}
	name := tr.opts.FieldManager + "." + r.Name + p.suffix()
	if p.name == "" {
		return tr.newPolicy(r, name, spec), nil
	}
	if !tr.readParams(r, p, name, keys, spec) {
		return nil, nil
	}
	policy := tr.newPolicy(r, name, spec)
	policy.Binding.Spec.ParamRef = paramRef(p)
	return policy, nil
}

// newPolicy is the policy named name with spec, that applies r, and its
// binding, both labelled with ManagedByLabel, FieldManagerLabel and
// RuleLabel.
func (tr *translator) newPolicy(r *rule, name string, spec *admissionregistrationv1.MutatingAdmissionPolicySpec) *Policy {
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Labels: map[string]string{
			ManagedByLabel: ManagedBy, FieldManagerLabel: tr.opts.FieldManager, RuleLabel: r.Name}}
	}
	return &Policy{
		Rule: r.Name,
		Policy: &admissionregistrationv1.MutatingAdmissionPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicy"},
			ObjectMeta: meta(), Spec: *spec},
		Binding: &admissionregistrationv1.MutatingAdmissionPolicyBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicyBinding"},
			ObjectMeta: meta(), Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name}},
	}
}

// removalReason is why removals are left to the controller.
const removalReason = "left to the controller: a removal is for keys objects already carry, which admission does not see, " +
	"and removing at admission a key the client sent in its own request would answer it with an object that silently differs from what it asked for"

// values returns the variables of r's policy that sets keys and copies:
// one optional value per key of keys set at admission, the keys the
// copies set, then "added", the marker entries of the keys this request
// adds or changes; and the mutation's map entries, by kind.
func (tr *translator) values(r *rule, keys []*key, copies []copy) ([]admissionregistrationv1.Variable, map[string][]string, error) {
	var vars []admissionregistrationv1.Variable
	var added []string
	entries := map[string][]string{}
	for _, k := range keys {
		if k.err != nil {
			tr.note(r, k.field(), fmt.Sprintf("%v; the controller sets it", k.err))
			continue
		}
		guard, ok := tr.guard(r, k)
		if !ok {
			continue
		}
		if k.ifInvalid != "" {
			tr.note(r, k.field(), fmt.Sprintf("set where the value read is a valid label value; where it is not, the controller makes it one (ifInvalid: %s) after creation", k.ifInvalid))
		}
		v := fmt.Sprintf("v%d", len(vars))
		current := fmt.Sprintf("object.metadata.?%ss[?%s]", k.kind, quote(k.name))
		if k.ifAbsent {
			guard += " && !" + current + ".hasValue()"
		}
		vars = append(vars, admissionregistrationv1.Variable{Name: v,
			Expression: fmt.Sprintf("(%s && %s) ? optional.of(%s) : optional.none()", guard, k.val.present, k.val.text)})
		added = append(added, fmt.Sprintf(`(variables.%s.hasValue() && (!%s.hasValue() || %s.value() != variables.%s.value())) ? %s : ""`,
			v, current, current, v, quote(k.marked())))
		entries[k.kind] = append(entries[k.kind], fmt.Sprintf("?%s: variables.%s.hasValue() ? optional.of(string(variables.%s.value())) : optional.none()",
			quote(k.name), v, v))
	}
	if len(vars) == 0 && len(copies) == 0 {
		return nil, nil, nil
	}
	addedExpr := "[" + strings.Join(added, ", ") + `].filter(k, k != "")`
	vars = append(vars,
		// patch.MarkerKey of the resource requested.
		admissionregistrationv1.Variable{Name: "marker", Expression: fmt.Sprintf(
			`request.resource.resource + (request.resource.group == "" ? "" : "." + request.resource.group) + %s`,
			quote("."+patch.MarkerDomain+"/"+tr.opts.FieldManager))})
	if len(copies) > 0 {
		// The entries the marker lists, which the copies read.
		vars = append(vars, admissionregistrationv1.Variable{Name: "marked",
			Expression: `object.metadata.?annotations[?string(variables.marker)].orValue("").split(",").map(e, e.trim())`})
	}
	for _, c := range copies {
		vars = append(vars, c.variable)
		addedExpr += " + " + c.marked
	}
	vars = append(vars, admissionregistrationv1.Variable{Name: "added", Expression: addedExpr})
	// A marker of a newer format than patch.MarkerFormat is left as it is
	// (patch.MarkerReadable): the keys are set, but not listed in it.
	entries["annotation"] = append(entries["annotation"], "?string(variables.marker): variables.added.size() > 0 && "+
		fmt.Sprintf(`!object.metadata.?annotations[?string(variables.marker)].orValue("").split(",").exists(e, e.trim().startsWith(%s) && e.trim() != %s) ? `,
			quote(patch.MarkerFormatPrefix), quote(patch.MarkerFormatPrefix+patch.MarkerFormat))+
		`optional.of((object.metadata.?annotations[?string(variables.marker)].orValue("").split(",") + variables.added).filter(k, k != "").distinct().sort().join(",")) : optional.none()`)
	return vars, entries, nil
}

// spec is r's policy spec, with its variables and mutation map entries.
func (tr *translator) spec(r *rule, vars []admissionregistrationv1.Variable, entries map[string][]string, copies []copy) (*admissionregistrationv1.MutatingAdmissionPolicySpec, error) {
	match, nsCEL, err := matchResources(r)
	if err != nil {
		return nil, err
	}
	conds, err := tr.globalConditions()
	if err != nil {
		return nil, err
	}
	own, err := conditions(r.Compiled)
	if err != nil {
		return nil, err
	}
	for _, c := range own {
		conds = append(conds, admissionregistrationv1.MatchCondition{Name: c.name, Expression: c.expr})
	}
	if r.OptOutLocked { // it applies to objects that opt out too
		conds = slices.DeleteFunc(conds, func(c admissionregistrationv1.MatchCondition) bool { return c.Name == notIgnored })
	}
	var parts []string
	for _, kind := range []string{"annotation", "label"} {
		if len(entries[kind]) > 0 {
			parts = append(parts, fmt.Sprintf("%ss: {%s}", kind, strings.Join(entries[kind], ", ")))
		}
	}
	cond := mutationCondition(r, nsCEL, "("+r.When+")")
	exprs := []string{fmt.Sprintf("%s ? Object{metadata: Object.metadata{%s}} : Object{}", cond, strings.Join(parts, ", "))}
	for _, c := range copies { // a mutation each: their keys are known when admitted only
		exprs = append(exprs, fmt.Sprintf("%s ? Object{metadata: Object.metadata{%ss: variables.%s}} : Object{}", cond, c.kind, c.variable.Name))
	}
	return policySpec(match, conds, vars, exprs), nil
}

// mutationCondition is the CEL condition of r's mutations: what of r's
// selection reads namespaceObject, which matchConditions do not see — the
// namespace's opt-out (unless r applies to objects that opt out),
// nsCEL, and when, r's when condition as the policy reads it, where it
// reads the namespace.
func mutationCondition(r *rule, nsCEL, when string) string {
	cond := "(namespaceObject == null || !" + optsOut("namespaceObject") + ")"
	if r.OptOutLocked {
		cond = "true"
	}
	if nsCEL != "" {
		cond += " && " + nsCEL
	}
	if r.WhenReadsNamespace() {
		cond += " && " + when
	}
	return cond
}

// policySpec is a policy's spec: its match, variables and one
// ApplyConfiguration mutation per expression of exprs, in order; its
// failures are ignored, and it is invoked again if a later policy changes
// the object.
func policySpec(match *admissionregistrationv1.MatchResources, conds []admissionregistrationv1.MatchCondition,
	vars []admissionregistrationv1.Variable, exprs []string) *admissionregistrationv1.MutatingAdmissionPolicySpec {
	var mutations []admissionregistrationv1.Mutation
	for _, e := range exprs {
		mutations = append(mutations, admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
			ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: e}})
	}
	return &admissionregistrationv1.MutatingAdmissionPolicySpec{
		MatchConstraints:   match,
		MatchConditions:    conds,
		Variables:          vars,
		Mutations:          mutations,
		FailurePolicy:      ptr.To(admissionregistrationv1.Ignore),
		ReinvocationPolicy: admissionregistrationv1.IfNeededReinvocationPolicy,
	}
}

// matchResources are r's resources at CREATE and UPDATE (at CREATE alone
// for a locked rule: at UPDATE its lock, package keylock, denies a change
// of its keys, which this policy would otherwise undo unseen), with its
// label selectors where a LabelSelector can state them. A
// namespaceSelector that one cannot is returned as CEL, for the mutation
// to test.
func matchResources(r *rule) (match *admissionregistrationv1.MatchResources, nsCEL string, err error) {
	match = &admissionregistrationv1.MatchResources{MatchPolicy: ptr.To(admissionregistrationv1.Equivalent)}
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	if r.Locked != nil {
		ops = ops[:1]
	}
	for _, gvr := range r.resources {
		match.ResourceRules = append(match.ResourceRules, admissionregistrationv1.NamedRuleWithOperations{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: ops,
				Rule: admissionregistrationv1.Rule{APIGroups: []string{gvr.Group}, APIVersions: []string{gvr.Version},
					Resources: []string{gvr.Resource}, Scope: ptr.To(admissionregistrationv1.AllScopes)},
			}})
	}
	if r.Selector != "" {
		// A prefilter: at UPDATE the API server also matches the old
		// object's labels; the "selector" condition decides on the new.
		if match.ObjectSelector, err = labelSelector(r.Selector); err != nil {
			return nil, "", err
		}
	}
	if r.NamespaceSelector != "" {
		if match.NamespaceSelector, err = labelSelector(r.NamespaceSelector); err != nil {
			return nil, "", err
		}
		if match.NamespaceSelector == nil {
			nsCEL, err = namespaceSelection(r.Compiled)
		}
	}
	return match, nsCEL, err
}
