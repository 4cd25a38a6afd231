package keylock

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Policy is the policy and binding that lock one rule's keys.
type Policy struct {
	// Rule is the rule's name.
	Rule    string
	Policy  *admissionregistrationv1.ValidatingAdmissionPolicy
	Binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// key is a locked key: its kind's metadata field ("labels"), its name,
// and the literal value the rule sets it to, if any.
type key struct {
	field, name, literal string
	hasLiteral           bool
}

// Policies returns, for each rule of set marked locked, in file order, the
// ValidatingAdmissionPolicy, named "<fieldManager>.lock.<rule>", that lets
// only the rule's users and groups set, change or remove the keys it sets
// or removes, on its resources and their subresources (pods/status,
// pods/binding…), in the namespaces it names literally (everywhere when
// it names none, or by glob). At CREATE, a key set to the value the rule
// gives it literally is no change: the admission policies of the same
// rules set it so.
func Policies(set *rules.Set, fieldManager string) []Policy {
	type locked struct {
		c    *rules.Compiled
		gvrs []schema.GroupVersionResource
	}
	byIndex := map[int]*locked{}
	for _, t := range set.SortedTargets() {
		for _, c := range t.Rules {
			if c.Locked == nil || c.Tenant != "" {
				continue
			}
			if byIndex[c.Index] == nil {
				byIndex[c.Index] = &locked{c: c}
			}
			byIndex[c.Index].gvrs = append(byIndex[c.Index].gvrs, t.GVR)
		}
	}
	var out []Policy
	for _, i := range slices.Sorted(maps.Keys(byIndex)) {
		l := byIndex[i]
		keys := keysOf(&l.c.Rule)
		if len(keys) == 0 {
			continue
		}
		out = append(out, policy(l.c, l.gvrs, keys, fieldManager))
	}
	return out
}

// keysOf returns the keys r sets or removes, sorted by kind and name.
func keysOf(r *spec.Rule) []key {
	var out []key
	for _, kind := range []string{spec.AnnotationKind, spec.LabelKind} {
		m := r.Of(kind)
		names := spec.KeysOf(m.Values)
		maps.Copy(names, m.Computed())
		for _, k := range m.Remove {
			names[k] = ""
		}
		for _, k := range slices.Sorted(maps.Keys(names)) {
			lit, ok := m.Values[k]
			out = append(out, key{field: kind + "s", name: k, literal: lit, hasLiteral: ok})
		}
	}
	return out
}

// absent is the value a CEL expression reads for a key the object lacks.
const absent = `"\u0000"`

// changed is the CEL condition under which a request sets, changes or
// removes k.
func (k key) changed() string {
	q := strconv.Quote(k.name)
	cur := fmt.Sprintf("object.metadata.?%s[?%s].orValue(%s)", k.field, q, absent)
	old := fmt.Sprintf("oldObject.metadata.?%s[?%s].orValue(%s)", k.field, q, absent)
	created := cur + " != " + absent
	if k.hasLiteral {
		created += " && " + cur + " != " + strconv.Quote(k.literal)
	}
	return fmt.Sprintf("(oldObject == null ? (%s) : %s != %s)", created, old, cur)
}

func policy(c *rules.Compiled, gvrs []schema.GroupVersionResource, keys []key, fieldManager string) Policy {
	name := fieldManager + ".lock." + c.Name
	var conds, described []string
	for _, k := range keys {
		conds = append(conds, k.changed())
		described = append(described, strings.TrimSuffix(k.field, "s")+" "+k.name)
	}
	var resourceRules []admissionregistrationv1.NamedRuleWithOperations
	for _, gvr := range gvrs {
		resourceRules = append(resourceRules, admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{gvr.Group}, APIVersions: []string{"*"},
				Resources: []string{gvr.Resource, gvr.Resource + "/*"}},
		}})
	}
	fail := admissionregistrationv1.Fail
	users, groups := celList(c.Locked.Users), celList(c.Locked.Groups)
	who := strings.Join(append(slices.Clone(c.Locked.Users), c.Locked.Groups...), ", ")
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels(fieldManager, c.Name)},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: resourceRules, NamespaceSelector: namespaces(c)},
			MatchConditions:  []admissionregistrationv1.MatchCondition{{Name: "changes-locked-keys", Expression: strings.Join(conds, " ||\n")}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("request.userInfo.username in %s ||\nrequest.userInfo.groups.exists(g, g in %s)", users, groups),
				MessageExpression: strconv.Quote(fmt.Sprintf("rule %s locks %s: only %s may set, change or remove them; ", c.Name, strings.Join(described, ", "), who)) +
					` + request.userInfo.username + " may not"`,
				Reason: ptr(metav1.StatusReasonForbidden),
			}},
		},
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels(fieldManager, c.Name)},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	return Policy{Rule: c.Name, Policy: p, Binding: b}
}

// namespaces selects the namespaces the rule names, when it names them all
// literally (a Namespace itself by its own name label); nil for all.
func namespaces(c *rules.Compiled) *metav1.LabelSelector {
	if len(c.Namespaces) == 0 || slices.ContainsFunc(c.Namespaces, func(ns string) bool { return strings.ContainsAny(ns, `*?[\`) }) {
		return nil
	}
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: slices.Clone(c.Namespaces)}}}
}

func labels(fieldManager, rule string) map[string]string {
	return map[string]string{"app.kubernetes.io/managed-by": fieldManager, "kube-annotator.io/rule": rule}
}

func celList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func ptr[T any](v T) *T { return &v }

// Manifests renders policies as one YAML stream, each policy followed by
// its binding, for `kubectl apply -f -`.
func Manifests(policies []Policy) ([]byte, error) {
	var b bytes.Buffer
	for _, p := range policies {
		for _, obj := range []runtime.Object{p.Policy, p.Binding} {
			u, err := admission.Unstructured(obj)
			if err != nil {
				return nil, err
			}
			data, err := yaml.Marshal(u.Object)
			if err != nil {
				return nil, err
			}
			b.WriteString("---\n")
			b.Write(data)
		}
	}
	return b.Bytes(), nil
}
