package lint

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Settled returns the rules of f, loaded from name, whose selectors or
// when conditions would not settle (Unsettled), at their lines, as one
// *rulefile.Error; nil when there are none.
func Settled(name string, f *rulefile.File) error {
	errs := Unsettled(f.Rules)
	if len(errs) == 0 {
		return nil
	}
	for i := range errs {
		errs[i].Line = f.Line(errs[i].Field)
	}
	return rulefile.Problems(name, errs, false)
}

// Unsettled finds rules that can never settle: rules whose writes decide
// whether they themselves, or each other, select an object, so that the
// controller would undo and redo its own writes without end. It returns
// one FieldError per problem, at the selector that tests the key.
//
// Only labels count: selectors test labels, never annotations. Only label
// writes count, not removals: the controller never restores a key a rule
// removed, so a removal changes a selector's verdict once and then
// settles ("selector: old=true" with "removeLabels: [old]" is a fine
// one-shot cleanup). Audit rules write nothing and so flip nothing.
//
// One rule: its selector must still match after its own write, whatever
// value it writes (a label set only where absent is written only where the
// selector matches without it). "selector: '!k'" with "labels: {k: …}" sets k, stops
// selecting the object, deletes the k it owns, selects it again and sets
// k again, forever; "selector: tier=web" with "labels: {tier: frontend}"
// overwrites web, then deletes its own frontend. A value read from the
// object or its namespace may be anything, so only "selector: k" (k
// exists) is sure to match after it. A selector that still matches, such
// as "selector: tier" with "labels: {tier: web}", is fine.
//
// Several rules on one resource: a rule whose selector tests a label
// another rule sets merely depends on it, and settles whether the value
// keeps it matching or not: the writer settles first, then the reader.
// What cannot be trusted to settle is a cycle — A's selector tests a
// label B sets, and B's selector (directly or through other rules) tests
// one A sets. The controller evaluates all rules of an object together
// and writes their result in one request, so the rules of a cycle switch
// together: with A "!x → y" and B "!y → x", an object with neither gets
// both, then loses both, forever. Even a cycle of writes that keep each
// other matching (A "y → x", B "x → y") settles only where both or
// neither are present: after someone deletes y from an object carrying
// both, A drops x while B sets y, then B drops y while A sets x, forever.
// So every cycle is refused, and a chain is accepted.
//
// Rules are on one resource when they name it the same way; namespaces,
// namespace and ns are one name, and for Namespaces namespaceSelector
// tests the object's own labels as selector does. Two spellings of one
// other resource (deploy, deployments) are not matched here, as the file
// alone does not say they are the same; Compile finds those Cycles, and
// the conditions on keys set by the other name's rules, once discovery has
// resolved the names.
func Unsettled(rules []rulefile.Rule) []rulefile.FieldError {
	var out []rulefile.FieldError
	for i := range rules {
		out = append(out, selfUnsettled(&rules[i], i)...)
		out = append(out, workloadLabels(&rules[i], i)...)
	}
	reported, whenReported := map[int]bool{}, map[string]bool{}
	reads := parsedWhenReads(rules)
	for _, res := range resourceGroups(rules) {
		out = append(out, Cycles(rules, res.rules, res.namespaces, reported)...)
		out = append(out, WhenUnsettled(rules, res.rules, reads, whenReported)...)
	}
	return out
}

// labelTest is one requirement of a rule's selector on its object's labels.
type labelTest struct {
	field string // "selector" or "namespaceSelector", as in the file
	req   labels.Requirement
}

// labelTests returns what r's selectors test of the object's own labels.
// On namespaces, namespaceSelector tests them too.
func labelTests(r *rulefile.Rule, namespaces bool) []labelTest {
	var out []labelTest
	add := func(field, sel string) {
		s, err := labels.Parse(sel)
		if err != nil {
			return // reported by the decoder
		}
		reqs, _ := s.Requirements()
		for _, q := range reqs {
			out = append(out, labelTest{field: field, req: q})
		}
	}
	if r.Selector != "" {
		add("selector", r.Selector)
	}
	if namespaces && r.NamespaceSelector != "" {
		add("namespaceSelector", r.NamespaceSelector)
	}
	return out
}

// labelWrite is a label value a rule sets: a literal, or read (how says
// from where).
type labelWrite struct {
	value, how string
	ifAbsent   bool // only where the label is absent
}

func (w labelWrite) String() string {
	if w.how != "" {
		return "to a value " + w.how
	}
	return fmt.Sprintf("to %q", w.value)
}

// keeps reports whether q holds on an object after w is written.
func (w labelWrite) keeps(q labels.Requirement) bool {
	if w.how != "" {
		return q.Operator() == selection.Exists
	}
	return q.Matches(labels.Set{q.Key(): w.value})
}

// labelWrites are the labels a rule sets, by key, and the label sets it
// copies.
type labelWrites struct {
	keys   map[string]labelWrite
	copies []rulefile.KeySet
}

// of returns how the rule sets the label key, and whether it does.
func (w labelWrites) of(key string) (labelWrite, bool) {
	if lw, ok := w.keys[key]; ok {
		return lw, true
	}
	for _, set := range w.copies {
		if set.Matches(key) {
			how := "copied from " + set.String() + " computed in CEL"
			if set.Source != nil {
				how = "copied from " + set.Source.What + "'s " + set.String()
			}
			return labelWrite{how: how, ifAbsent: true}, true
		}
	}
	return labelWrite{}, false
}

// labelWritesOf returns the labels r sets and copies; none for an audit
// rule.
func labelWritesOf(r *rulefile.Rule) labelWrites {
	if r.Audit() {
		return labelWrites{}
	}
	out := map[string]labelWrite{}
	for k, v := range r.Labels.Values {
		out[k] = labelWrite{value: v}
	}
	for k := range spec.Joined(r.Labels.From, r.Labels.CEL) {
		out[k] = labelWrite{how: "read from the object"}
	}
	for k, from := range r.Labels.FromNamespace {
		out[k] = labelWrite{how: "read from the namespace's " + from.String()}
	}
	for k, from := range r.Labels.FromRelated {
		out[k] = labelWrite{how: "read from " + from.Source.What + "'s " + from.String()}
	}
	for k := range r.Labels.IfAbsent {
		w := out[k]
		w.ifAbsent = true
		out[k] = w
	}
	return labelWrites{keys: out, copies: r.Labels.Copy}
}

// selfUnsettled reports the selectors of r, at index i, that its own
// writes make fail.
func selfUnsettled(r *rulefile.Rule, i int) []rulefile.FieldError {
	writes := labelWritesOf(r)
	var out []rulefile.FieldError
	for _, t := range labelTests(r, slices.ContainsFunc(r.Resources, isNamespacesName)) {
		w, ok := writes.of(t.req.Key())
		if !ok || w.keeps(t.req) || (w.ifAbsent && !t.req.Matches(labels.Set{})) {
			continue // settles, or never writes: the selector needs the label present
		}
		out = append(out, rulefile.FieldError{
			Field: fmt.Sprintf("rules[%d].%s", i, t.field),
			Message: fmt.Sprintf("%q tests label %q, which the rule sets %s: after its own write the rule no longer selects the object, "+
				"so the controller would delete the label it set (and set it again where absent, without end); %s",
				t.req.String(), t.req.Key(), w, settleHint),
		})
	}
	return out
}

// settleHint says what to write instead of a selector on a key the rule
// sets.
const settleHint = `leave the label out of the selector; to set it only where it is absent, give it as {value: "…", ifAbsent: true}`

// resourceGroup is the rules that name one resource.
type resourceGroup struct {
	rules      []int // indexes, in file order
	namespaces bool  // the resource is namespaces
}

// resourceGroups groups rules by the resource names they give, in the
// order the names first appear.
func resourceGroups(rules []rulefile.Rule) []resourceGroup {
	var order []string
	by := map[string]*resourceGroup{}
	for i := range rules {
		for _, name := range rules[i].Resources {
			key := strings.ToLower(name)
			if isNamespacesName(name) {
				key = "namespaces"
			}
			g := by[key]
			if g == nil {
				g = &resourceGroup{namespaces: key == "namespaces"}
				by[key] = g
				order = append(order, key)
			}
			if !slices.Contains(g.rules, i) {
				g.rules = append(g.rules, i)
			}
		}
	}
	out := make([]resourceGroup, len(order))
	for i, k := range order {
		out[i] = *by[k]
	}
	return out
}

// isNamespacesName reports whether a resource name names Namespaces.
func isNamespacesName(name string) bool {
	switch strings.ToLower(name) {
	case "namespaces", "namespace", "ns", "namespaces.v1", "namespace.v1":
		return true
	}
	return false
}
