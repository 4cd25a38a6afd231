package rules

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/selection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Compiled is one rule ready to be evaluated against objects.
type Compiled struct {
	rulefile.Rule
	// Index is the rule's position in the file.
	Index int

	sel    *selection.Selection
	kinds  [len(kinds)]compiledKind
	values []*celexpr.Expr // the CEL values of annotations then labels, each by key
	owners map[*rulefile.Owners]*source.Walk
	refs   map[*rulefile.Refs]*source.Refer
}

func compileRule(r rulefile.Rule, index int) (*Compiled, error) {
	c := &Compiled{Rule: r, Index: index}
	var err error
	if c.sel, err = selection.Compile(&c.Rule); err != nil {
		return nil, err
	}
	if err := c.compileKinds(); err != nil {
		return nil, err
	}
	return c, nil
}

// ReadsObject reports whether the rule reads values from the object: with
// JSONPath, CEL, or the field that names a related object (fromNode).
func (c *Compiled) ReadsObject() bool {
	return c.readsFields() || len(c.celExprs()) > 0 || c.readsRelated()
}

// Selects reports whether the rule applies to obj. isNamespace says obj is
// a Namespace, which is matched by its own name and labels.
func (c *Compiled) Selects(obj metav1.Object, isNamespace bool, namespaces source.Lookup) bool {
	return c.Unselected(obj, isNamespace, namespaces) == ""
}

// Unselected returns why the rule does not apply to obj — the first of its
// selection fields that obj fails, named as in the file — or "" when it
// applies. isNamespace is as for Selects.
func (c *Compiled) Unselected(obj metav1.Object, isNamespace bool, namespaces source.Lookup) string {
	return c.sel.Unselected(obj, isNamespace, namespaces)
}

// home is the namespace fromNamespace values of an object are read from:
// obj, or nil and why there is none.
type home struct {
	obj metav1.Object
	why string
	// look finds the objects values are read from besides obj: its
	// namespace (for CEL's namespaceObject, with isNamespace) and its
	// related objects (fromNode).
	look        source.Lookup
	isNamespace bool
	// evaluated are outcomes of CEL values known already.
	evaluated []evaluated
}

// contribute adds what the rule wants of obj, whose namespace is h, to d.
// Keys already set by an earlier rule keep their value (file order
// decides); a different value is reported as a conflict.
func (c *Compiled) contribute(e *Evaluation, obj metav1.Object, h home) {
	for i := range c.kinds {
		c.kinds[i].contribute(e, c, obj, h)
	}
}

// attribute records rule as the remover of keys of kind, unless an earlier
// rule removes them.
func attribute(by map[keyOf]string, kind string, keys []string, rule string) map[keyOf]string {
	for _, k := range keys {
		if _, ok := by[keyOf{kind, k}]; !ok {
			by = spec.Put(by, keyOf{kind, k}, rule)
		}
	}
	return by
}

// alone returns what the rule alone wants of obj, whose namespace is h, as
// if it were the only rule and enforced: for audit rules and explanations.
func (c *Compiled) alone(obj metav1.Object, h home) *Evaluation {
	e := &Evaluation{}
	c.contribute(e, obj, h)
	return e
}

// Evaluation is what the rules want of one object.
type Evaluation struct {
	patch.Desired
	// Conflicts are keys two selected rules want different values for.
	Conflicts []Conflict
	// Problems are values that could not be read from the object.
	Problems []string
	// Unset are the keys of Problems, and the failed expressions that a
	// default stood in for, by rule and reason.
	Unset []Unset
	// Selected are the rules that select the object, in file order,
	// whatever their mode.
	Selected []*Compiled
	// Audited is what each selecting rule in audit mode wants, in file
	// order. It is not part of Desired: nothing is written for it.
	Audited []Audited

	setBy      map[keyOf]string // rule that set the key
	removedBy  map[keyOf]string // first rule that removes the key
	defaulted  map[keyOf]string // why a rule's default is set
	unrecorded map[keyOf]bool   // defaulted for want of the admission request
	madeValid  map[keyOf]string // how a value read was made valid (for explain, of a rule alone)
	inputs     map[keyOf]string // where a related value was read
	held       map[keyOf]string // rule whose expression failed for the key: see Held
	once       map[keyOf]string // rule that records the key: see Recorded
}

// keyOf names an annotation (kind "annotation") or a label (kind "label").
type keyOf struct{ kind, key string }

// Audited is what one rule in audit mode wants of an object.
type Audited struct {
	Rule    *Compiled
	Desired patch.Desired
}

// RuleFor names the rule that sets or removes the key of kind
// ("annotation" or "label") in e, or returns "" when no rule does (a key
// the controller set before that no rule wants any more).
func (e *Evaluation) RuleFor(kind, key string) string {
	if r, ok := e.setBy[keyOf{kind, key}]; ok {
		return r
	}
	return e.removedBy[keyOf{kind, key}]
}

func (e *Evaluation) merge(into, literal, computed, fromNamespace map[string]string, rule, kind string) map[string]string {
	for _, m := range []map[string]string{literal, computed, fromNamespace} {
		for k, v := range m {
			if into == nil {
				into = map[string]string{}
			}
			if prev, ok := into[k]; ok {
				if prev != v {
					e.Conflicts = append(e.Conflicts, Conflict{Kind: kind, Key: k, Kept: e.setBy[keyOf{kind, k}], Dropped: rule})
				}
				continue
			}
			into[k] = v
			e.setBy = spec.Put(e.setBy, keyOf{kind, k}, rule)
		}
	}
	return into
}

// ifAbsent returns into, the keys of desired (of kind) to set only where
// absent, updated for rule, which wants the keys of values, those in
// ifAbsent only where absent. A key is set only where absent when the rule
// whose value is set (the first, in file order) says so and no later rule
// that wants the same value always sets it.
func (e *Evaluation) ifAbsent(into map[string]bool, desired map[string]string, ifAbsent map[string]bool, rule, kind string, values ...map[string]string) map[string]bool {
	for _, m := range values {
		for k, v := range m {
			switch {
			case e.setBy[keyOf{kind, k}] == rule && ifAbsent[k]:
				into = spec.Put(into, k, true)
			case !ifAbsent[k] && desired[k] == v:
				delete(into, k)
			}
		}
	}
	return into
}

// Conflict is two selected rules wanting different values for one
// annotation or label of one object. File order decides: the value of the
// rule named Kept is set, that of Dropped is not.
type Conflict struct {
	Kind, Key     string
	Kept, Dropped string
}
