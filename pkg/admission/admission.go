package admission

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Labels on every policy and binding Translate returns.
const (
	// ManagedByLabel is app.kubernetes.io/managed-by, set to ManagedBy.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "kube-annotator"
	// FieldManagerLabel names the field manager whose rules the policy
	// applies: each field manager keeps its own policies.
	FieldManagerLabel = "kube-annotator.io/field-manager"
	// RuleLabel names the rule the policy applies.
	RuleLabel = "kube-annotator.io/rule"
)

// Options say how rules are applied, as the controller applies them.
type Options struct {
	// FieldManager is the controller's field manager, a DNS label: it
	// names the policies and the marker annotation.
	FieldManager string
	// ExcludeNamespaces are namespace globs no rule applies in.
	ExcludeNamespaces []string
	// Namespace, when set, is the only namespace whose objects the rules
	// apply to (cluster-scoped objects are not restricted).
	Namespace string
}

// Policy is the policy and binding that apply one rule at admission.
type Policy struct {
	// Rule is the rule's name.
	Rule    string
	Policy  *admissionregistrationv1.MutatingAdmissionPolicy
	Binding *admissionregistrationv1.MutatingAdmissionPolicyBinding
}

// Note says what of a rule is not done at admission, and why. The
// controller still enforces it.
type Note struct {
	// Rule is the rule's name; Field the rule's field the note is about, ""
	// for the whole rule.
	Rule, Field string
	Reason      string
}

func (n Note) String() string {
	if n.Field == "" {
		return "rule " + n.Rule + ": " + n.Reason
	}
	return "rule " + n.Rule + ": " + n.Field + ": " + n.Reason
}

// ValidateFieldManager reports a field manager that cannot name admission
// policies: their names and labels carry it, so it must be a DNS label.
func ValidateFieldManager(manager string) error {
	if msgs := validation.IsDNS1123Label(manager); len(msgs) > 0 {
		return fmt.Errorf("field manager %q cannot name admission policies: %s", manager, strings.Join(msgs, "; "))
	}
	return nil
}

// Translate returns the policies that apply set's rules at admission, in
// file order, and notes on what is left to the controller.
//
// Each rule becomes one policy and its binding, both named
// "<field manager>.<rule>" and labelled with ManagedByLabel,
// FieldManagerLabel and RuleLabel. The policy matches the rule's resources
// at CREATE and UPDATE; the rule's selection becomes the policy's
// objectSelector and namespaceSelector where a LabelSelector can state it,
// and CEL matchConditions for name and namespace globs, the excluded
// namespaces and the label selector read on the object itself. One
// ApplyConfiguration mutation sets the rule's literal values and the values
// it reads with JSONPath, each only when its fields are present (as the
// controller does); a key set only where absent (ifAbsent) is set only when
// the admitted object lacks it; a recorded value read from the request
// (who asks) is set at CREATE only, the default at a later UPDATE, as the
// controller sets it. When an earlier rule in the file may set the same key
// differently, the later rule's policy sets the key only where the earlier
// rule does not select the object or has no value for it, as file order
// decides for the controller. Failures are ignored (failurePolicy Ignore):
// a policy never blocks a request, and the controller converges what it
// did not set.
//
// A value read from a ConfigMap named in the object's namespace
// ({fromRef: {resource: configmaps, name: NAME, data: KEY}}, or a label or
// annotation of it) is set by a policy of its own per ConfigMap, named
// "<field manager>.<rule>.configmaps.<NAME>", which reads the ConfigMap
// as its params (paramKind ConfigMap; its binding's paramRef names NAME
// and no namespace: the admitted object's). A key the ConfigMap lacks is
// the default, or is not set, as for the controller; where the ConfigMap
// is missing, the policy is skipped (parameterNotFoundAction Allow) and
// the controller sets the key after creation.
//
// The policy also lists the keys it added or changed in the marker
// annotation patch.MarkerKey(field manager, resource), so that the
// controller counts them as its own (see package reconcile): the API server
// records no owner for keys set at admission.
//
// Objects that opt out (kube-annotator.io/ignore: "true" on the object or
// its namespace) are left alone, as the controller leaves them; rules in
// audit mode, which write nothing, have no policy.
//
// What a rule asks that cannot be done at admission is left to the
// controller, and Translate says so in a Note: removals (removeAnnotations,
// removeLabels), JSONPath values that CEL cannot read the same way, values
// read from the namespace or from related objects but ConfigMaps named as
// above, keys an earlier rule may set from such a value, and names of
// objects created with generateName.
func Translate(set *rules.Set, opts Options) ([]Policy, []Note, error) {
	if err := ValidateFieldManager(opts.FieldManager); err != nil {
		return nil, nil, err
	}
	tr := &translator{opts: opts}
	if err := tr.collect(set); err != nil {
		return nil, nil, err
	}
	var out []Policy
	for _, r := range tr.rules {
		ps, err := tr.policies(r)
		if err != nil {
			return nil, nil, fmt.Errorf("rule %s: %w", r.Name, err)
		}
		out = append(out, ps...)
		p, err := tr.templatePolicy(r)
		if err != nil {
			return nil, nil, fmt.Errorf("rule %s: pod templates: %w", r.Name, err)
		}
		if p != nil {
			out = append(out, *p)
		}
	}
	return out, tr.notes, nil
}

// translator holds what Translate needs across rules.
type translator struct {
	opts  Options
	rules []*rule // in file order
	notes []Note
}

// rule is a compiled rule with its resources and what it sets.
type rule struct {
	*rules.Compiled
	resources  []schema.GroupVersionResource
	namespaced []schema.GroupResource // those of resources whose objects are in a namespace
	keys       []*key
	selection  string // CEL: the rule selects the admitted object
}

// key is one annotation or label a rule sets.
type key struct {
	kind, name string
	literal    *string
	from       string // JSONPath template, when not literal
	param      param  // the object val reads as the policy's params, if any
	val        value
	err        error  // why val cannot be read at admission
	ifAbsent   bool   // set only where the object lacks it
	ifInvalid  string // how the controller makes a label value read valid, when the rule says
}

// field is the rule field that sets k, for notes.
func (k *key) field() string {
	if k.kind == "label" {
		return "labels." + k.name
	}
	return "annotations." + k.name
}

// marked is k as the marker lists it.
func (k *key) marked() string {
	if k.kind == "label" {
		return patch.MarkerLabel + k.name
	}
	return k.name
}

// collect gathers set's rules in file order, with their resources, keys
// and selection; those of the main file alone, never a tenant's.
func (tr *translator) collect(set *rules.Set) error {
	byIndex := map[int]*rule{}
	for _, t := range set.SortedTargets() {
		for _, c := range t.Rules {
			if c.Tenant != "" {
				continue // a tenant's rules are the controller's alone
			}
			r := byIndex[c.Index]
			if r == nil {
				r = &rule{Compiled: c}
				byIndex[c.Index] = r
				tr.rules = append(tr.rules, r)
			}
			if patch.MarkerKey(tr.opts.FieldManager, t.GVR.GroupResource()) == "" {
				return fmt.Errorf("rule %s: field manager %q and resource %s cannot name a marker annotation", c.Name, tr.opts.FieldManager, source.GVRString(t.GVR))
			}
			r.resources = append(r.resources, t.GVR)
			if t.Namespaced {
				r.namespaced = append(r.namespaced, t.GVR.GroupResource())
			}
		}
	}
	slices.SortFunc(tr.rules, func(a, b *rule) int { return a.Index - b.Index })
	for _, r := range tr.rules {
		r.keys = ruleKeys(r.Compiled)
		r.scopeParams()
		sel, err := selects(r.Compiled)
		if err != nil {
			return fmt.Errorf("rule %s: %w", r.Name, err)
		}
		r.selection = sel
	}
	return nil
}

// errFromNamespace is why a value read from the object's namespace is not
// set at admission.
var errFromNamespace = errors.New("a value read from the namespace is kept in sync by the controller only")

// errFallback is why a value whose default is another value form is not
// set at admission: where its source is missing, the policy could not
// follow the chain as the controller does (it reads neither related
// objects nor, kept in sync, the namespace), so it leaves the whole key
// to the controller rather than set a value the controller would change.
var errFallback = errors.New("its default is read from another source, which the controller follows")

// errOwnerObject is why a CEL expression that reads ownerObject is not
// evaluated at admission.
var errOwnerObject = fmt.Errorf("it reads %s, which admission policies cannot read: %s", celexpr.OwnerObject, source.Owner.NoAdmission)

// errFromRelated is why a value read from a related object of src
// (fromNode, fromOwner, fromRef) is not set at admission: a policy reads
// the object and its namespace only (source.Source.NoAdmission), and, as
// its params, an object named by name (paramOf).
func errFromRelated(src *source.Source) error {
	err := fmt.Errorf("a value read from %s is set by the controller only: %s", src.What, src.NoAdmission)
	if src.IsRef {
		err = fmt.Errorf("%w (but a ConfigMap given by name:, in the object's namespace, which the policy reads as its params)", err)
	}
	return err
}

// ruleKeys lists what c sets, annotations then labels, each sorted.
func ruleKeys(c *rules.Compiled) []*key {
	var out []*key
	for _, kind := range []string{rulefile.AnnotationKind, rulefile.LabelKind} {
		m := c.Of(kind)
		defaults, ifInvalid := m.Default, m.IfInvalid
		var keys []*key
		for name, v := range m.Values {
			keys = append(keys, &key{kind: kind, name: name, literal: &v, val: value{present: "true", text: quote(v)}})
		}
		for name, tmpl := range m.From {
			k := &key{kind: kind, name: name, from: tmpl}
			k.val, k.err = jsonPathValue(tmpl)
			if k.err == nil {
				k.val = k.val.checked(kind, name, defaults, ifInvalid)
			}
			keys = append(keys, k)
		}
		for name, expr := range m.CEL {
			keys = append(keys, celKey(c, m, kind, name, expr))
		}
		for name := range m.FromNamespace {
			// The policy could read the namespace (namespaceObject), but
			// it would then carry a copy of the namespace's value that no
			// later change of the namespace updates until the controller
			// does: the controller keeps such keys in sync on its own.
			keys = append(keys, &key{kind: kind, name: name, err: errFromNamespace})
		}
		for name, rk := range m.FromRelated {
			k := &key{kind: kind, name: name, err: errFromRelated(rk.Source)}
			if p, v, ok := paramOf(rk); ok {
				// Read as the policy's params, as the controller reads it:
				// a missing key is the default, or sets nothing.
				k.param, k.val, k.err = p, v.checked(kind, name, defaults, ifInvalid), nil
			}
			keys = append(keys, k)
		}
		for _, k := range keys {
			k.ifAbsent, k.ifInvalid = m.IfAbsent[k.name] || m.Once[k.name], ifInvalid[k.name] // a recorded key, too, is set only where absent
			if fb := m.Fallback[k.name]; fb != nil && k.err == nil {
				k.err, k.param = errFallback, param{}
			}
		}
		slices.SortFunc(keys, func(a, b *key) int { return strings.Compare(a.name, b.name) })
		out = append(out, keys...)
	}
	return out
}

// atCreate is a CEL condition: the request creates the object.
const atCreate = `request.operation == "CREATE"`

// labelValue is the API server's pattern for a label value.
const labelValue = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`

// validValue is a CEL condition: text is a value the controller would set,
// as rules checks a value read from an object.
func validValue(kind, text string) string {
	if kind == "label" {
		return fmt.Sprintf("size(%s) <= 63 && %s.matches(%s)", text, text, quote(labelValue))
	}
	return fmt.Sprintf("size(bytes(%s)) <= 262144", text)
}

// sharesResource reports whether a and b name a resource in common, and
// returns the CEL condition that the request is for one of those.
func sharesResource(a, b *rule) (string, bool) {
	var terms []string
	for _, g := range a.resources {
		if slices.ContainsFunc(b.resources, func(h schema.GroupVersionResource) bool { return g.GroupResource() == h.GroupResource() }) {
			terms = append(terms, fmt.Sprintf("(request.resource.group == %s && request.resource.resource == %s)", quote(g.Group), quote(g.Resource)))
		}
	}
	return "(" + strings.Join(terms, " || ") + ")", len(terms) > 0
}

// guard returns the CEL condition under which r may set k: no earlier rule
// that may apply to the same object sets it. ok is false when an earlier
// rule may set k from a value admission cannot read: k is then left to
// the controller.
func (tr *translator) guard(r *rule, k *key) (cond string, ok bool) {
	var terms []string
	for _, e := range tr.rules {
		if e.Index >= r.Index {
			break
		}
		if e.Audit() {
			continue // it writes nothing, so it takes no key from later rules
		}
		res, shared := sharesResource(r, e)
		if !shared {
			continue
		}
		for _, set := range e.Of(k.kind).Copy {
			if set.Matches(k.name) {
				tr.note(r, k.field(), fmt.Sprintf("left to the controller: rule %s, earlier in the file, may copy it (copy %s %s)", e.Name, set.From(), &set))
				return "", false
			}
		}
		for _, ek := range e.keys {
			if ek.kind != k.kind || ek.name != k.name {
				continue
			}
			if ek.literal != nil && k.literal != nil && *ek.literal == *k.literal {
				continue // the same value whichever rule sets it
			}
			if ek.err != nil {
				tr.note(r, k.field(), fmt.Sprintf("left to the controller: rule %s, earlier in the file, may set it from a value admission cannot read", e.Name))
				return "", false
			}
			if ek.param != k.param && ek.param.name != "" {
				tr.note(r, k.field(), fmt.Sprintf("left to the controller: rule %s, earlier in the file, may set it from %s, which this policy does not read", e.Name, ek.param))
				return "", false
			}
			sel := e.selection
			if r.OptOutLocked && !e.OptOutLocked { // e does not apply where the object opts out; r does
				sel += " && !" + optsOut("object") + " && (namespaceObject == null || !" + optsOut("namespaceObject") + ")"
			}
			terms = append(terms, fmt.Sprintf("!(%s && %s && %s)", res, sel, ek.val.present))
		}
	}
	if len(terms) == 0 {
		return "true", true
	}
	return strings.Join(terms, " && "), true
}

func (tr *translator) note(r *rule, field, reason string) {
	tr.notes = append(tr.notes, Note{Rule: r.Name, Field: field, Reason: reason})
}
