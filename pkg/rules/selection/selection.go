package selection

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kube-annotator/kube-annotator/pkg/glob"
	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Selection is a rule's selection fields compiled: which objects of its
// resources the rule applies to.
type Selection struct {
	// Selector and NamespaceSelector are the rule's label selectors
	// parsed; nil when not given.
	Selector, NamespaceSelector labels.Selector
	// When is the rule's when condition compiled; nil when not given.
	When *celexpr.Expr
	rule *spec.Rule
}

// Compile compiles the selection fields of r, which it keeps.
func Compile(r *spec.Rule) (*Selection, error) {
	s := &Selection{rule: r}
	var err error
	if r.Selector != "" {
		if s.Selector, err = labels.Parse(r.Selector); err != nil {
			return nil, err
		}
	}
	if r.NamespaceSelector != "" {
		if s.NamespaceSelector, err = labels.Parse(r.NamespaceSelector); err != nil {
			return nil, err
		}
	}
	if r.When != "" {
		if s.When, err = celexpr.Compile(r.When, celexpr.BoolType); err != nil {
			return nil, fmt.Errorf("when: %w", err)
		}
	}
	return s, nil
}

// Unselected returns why the rule does not apply to obj — the first of its
// selection fields that obj fails, named as in the file — or "" when it
// applies. isNamespace says obj is a Namespace, which is matched by its
// own name and labels; namespaces finds the object's namespace.
func (c *Selection) Unselected(obj metav1.Object, isNamespace bool, namespaces source.Lookup) string {
	if why := c.UnselectedBy(obj, isNamespace, namespaces); why != "" {
		return why
	}
	return c.WhenFails(obj, isNamespace, namespaces)
}

// UnselectedBy returns why the rule's label, name and namespace criteria
// do not select obj, or "": Unselected but for when.
func (c *Selection) UnselectedBy(obj metav1.Object, isNamespace bool, namespaces source.Lookup) string {
	if c.Selector != nil && !c.Selector.Matches(labels.Set(obj.GetLabels())) {
		return fmt.Sprintf("selector %q does not match the object's labels", c.rule.Selector)
	}
	if len(c.rule.Names) > 0 && !glob.Any(c.rule.Names, obj.GetName()) {
		return fmt.Sprintf("names %q do not match %q", c.rule.Names, obj.GetName())
	}
	ns := obj.GetNamespace()
	if isNamespace {
		ns = obj.GetName()
	}
	if ns == "" {
		return "" // cluster-scoped: namespace criteria do not apply
	}
	if len(c.rule.Namespaces) > 0 && !glob.Any(c.rule.Namespaces, ns) {
		return fmt.Sprintf("namespaces %q do not match namespace %q", c.rule.Namespaces, ns)
	}
	if glob.Any(c.rule.ExcludeNamespaces, ns) {
		return fmt.Sprintf("excludeNamespaces %q match namespace %q", c.rule.ExcludeNamespaces, ns)
	}
	if c.NamespaceSelector != nil {
		var set labels.Set
		if isNamespace {
			set = labels.Set(obj.GetLabels())
		} else if m, ok := source.NamespaceOf(namespaces, ns); ok {
			set = labels.Set(m.GetLabels())
		} else {
			// Not known yet; its arrival enqueues its objects.
			return fmt.Sprintf("namespaceSelector %q: namespace %q is not known", c.rule.NamespaceSelector, ns)
		}
		if !c.NamespaceSelector.Matches(set) {
			return fmt.Sprintf("namespaceSelector %q does not match the labels of namespace %q", c.rule.NamespaceSelector, ns)
		}
	}
	return ""
}

// WhenFails returns why the rule's when condition does not hold for obj,
// or "" when it does (or the rule has none). An error, or a result other
// than true, leaves the object unselected.
func (c *Selection) WhenFails(obj metav1.Object, isNamespace bool, namespaces source.Lookup) string {
	if c.When == nil {
		return ""
	}
	v, err := c.When.EvalOn(obj, isNamespace, namespaces)
	if err != nil {
		return fmt.Sprintf("when %q: %v", c.rule.When, err)
	}
	if b, ok := v.(bool); !ok || !b {
		return fmt.Sprintf("when %q is %v", c.rule.When, v)
	}
	return ""
}
