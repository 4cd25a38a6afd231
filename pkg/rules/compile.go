package rules

import (
	"fmt"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/glob"
	"github.com/kube-annotator/kube-annotator/pkg/rules/lint"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// ResolveFunc resolves a resource name as written in a rules file.
type ResolveFunc func(name string) (source.Resource, error)

// Target is everything the rules want of one resource.
type Target struct {
	source.Resource
	// Rules are the rules that name the resource, in file order.
	Rules []*Compiled
	// ReadsObjects is set when a rule reads fields of objects beyond what
	// a metadata cache keeps (see Compiled.ReadsFields), so that the cache
	// must keep objects with their fields rather than their metadata.
	ReadsObjects bool
	// NeedsNamespaceLabels is set when a rule selects by namespace labels.
	NeedsNamespaceLabels bool
	// ReadsNamespaces is set when a rule reads values from the objects'
	// namespaces (fromNamespace); NamespaceKeys says which.
	ReadsNamespaces bool

	static   *Evaluation      // what every object gets, when no rule selects or reads
	memo     *selectionMemo   // evaluations by the rules selecting, when no rule reads
	excluded []string         // namespace globs no rule applies in
	sources  []*source.Source // see Sources
}

// nothing is the evaluation of an object no rule selects.
var nothing = &Evaluation{}

// RuleNames returns the names of the target's rules.
func (t *Target) RuleNames() []string {
	names := make([]string, len(t.Rules))
	for i, r := range t.Rules {
		names[i] = r.Name
	}
	return names
}

// ruleIndexes returns the indexes in the file of the target's rules.
func (t *Target) ruleIndexes() []int {
	out := make([]int, len(t.Rules))
	for i, r := range t.Rules {
		out[i] = r.Index
	}
	return out
}

// isNamespaces reports whether the target is the namespaces resource.
func (t *Target) isNamespaces() bool {
	return t.GVR.Group == "" && t.GVR.Resource == "namespaces"
}

// Evaluate returns what the rules want of obj, which it only reads. Rules
// that read values from objects need obj's content (an
// *unstructured.Unstructured); any other rule needs only its metadata.
// The evaluation may be shared with other objects: callers only read it.
//
// namespaces gives the namespace of obj to rules that select by its labels
// or read its labels or annotations.
func (t *Target) Evaluate(obj metav1.Object, namespaces source.Lookup) *Evaluation {
	if g, _ := t.excludedBy(obj); g != "" {
		return nothing
	}
	if t.static != nil {
		return t.static
	}
	if t.memo != nil {
		return t.memo.evaluate(t, obj, namespaces)
	}
	return t.evaluate(obj, namespaces, nil, func(i int) bool { return t.Rules[i].Selects(obj, t.isNamespaces(), namespaces) })
}

// evaluate returns what the rules of t for which selected holds, by their
// index, want of obj; evaluated are outcomes of their CEL values known
// already.
func (t *Target) evaluate(obj metav1.Object, namespaces source.Lookup, evaluated []evaluated, selected func(i int) bool) *Evaluation {
	e := &Evaluation{}
	h := home{look: namespaces, isNamespace: t.isNamespaces(), evaluated: evaluated}
	if t.ReadsNamespaces {
		h.obj, h.why = t.home(obj, namespaces)
	}
	for i, r := range t.Rules {
		if !selected(i) {
			continue
		}
		e.Selected = append(e.Selected, r)
		if r.Audit() {
			w := r.alone(obj, h)
			e.Audited = append(e.Audited, Audited{Rule: r, Desired: w.Desired})
			e.Problems = append(e.Problems, w.Problems...)
			e.Unset = append(e.Unset, w.Unset...)
			continue
		}
		r.contribute(e, obj, h)
	}
	t.guardSelector(e, obj, namespaces) // for a rule that reads owners
	return e
}

// excludedBy returns the --exclude-namespaces glob that leaves obj out of
// every rule, or "", and the namespace it was matched with.
func (t *Target) excludedBy(obj metav1.Object) (pattern, namespace string) {
	if len(t.excluded) == 0 {
		return "", ""
	}
	ns := obj.GetNamespace()
	if t.isNamespaces() {
		ns = obj.GetName()
	}
	if ns == "" {
		return "", ""
	}
	if g, ok := glob.First(t.excluded, ns); ok {
		return g, ns
	}
	return "", ""
}

// SameRules reports whether t and o hold the same rules.
func (t *Target) SameRules(o *Target) bool {
	if len(t.Rules) != len(o.Rules) || !slices.Equal(t.excluded, o.excluded) {
		return false
	}
	for i := range t.Rules {
		if !t.Rules[i].Rule.Equal(&o.Rules[i].Rule) {
			return false
		}
	}
	return true
}

// Set is a rules file compiled against the resources the cluster serves:
// what to enforce, by resource.
type Set struct {
	// Targets holds one entry per resolved resource.
	Targets map[schema.GroupVersionResource]*Target
}

// DefaultExcludedNamespaces are the namespaces of the cluster itself, which
// no rule applies in unless the user says otherwise.
var DefaultExcludedNamespaces = []string{"kube-system", "kube-public", "kube-node-lease"}

// ExcludeNamespaces makes no rule apply in namespaces matching the globs
// (for the namespaces resource: to Namespaces so named), whatever the rules
// select. Keys the controller set there before are then deleted.
func (s *Set) ExcludeNamespaces(globs []string) error {
	for _, g := range globs {
		if err := glob.Check(g); err != nil {
			return fmt.Errorf("invalid namespace glob %q: %w", g, err)
		}
	}
	for _, t := range s.Targets {
		t.excluded = globs
	}
	return nil
}

// Names reports whether a target of s names gr, at any version.
func (s *Set) Names(gr schema.GroupResource) bool {
	for gvr := range s.Targets {
		if gvr.GroupResource() == gr {
			return true
		}
	}
	return false
}

// NeedsNamespaces reports whether the controller watches namespaces for
// the objects of a resource: for their namespace's labels, when a rule
// selects by them (selectsByNamespaceLabels), or to learn whether their
// namespace opts out (IgnoreAnnotation), when the resource is namespaced.
// The controller and the rbac command both ask it.
func NeedsNamespaces(namespaced, selectsByNamespaceLabels bool) bool {
	return namespaced || selectsByNamespaceLabels
}

// NeedsNamespaces reports whether the objects of t need the namespaces
// watched (see the function NeedsNamespaces).
func (t *Target) NeedsNamespaces() bool {
	return NeedsNamespaces(t.Namespaced, t.NeedsNamespaceLabels)
}

// SortedTargets returns the targets ordered by group, then resource, so that
// logs and output are stable.
func (s *Set) SortedTargets() []*Target {
	out := make([]*Target, 0, len(s.Targets))
	for _, t := range s.Targets {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].GVR, out[j].GVR
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Resource < b.Resource
	})
	return out
}

// Compile resolves every rule's resources and groups the rules by resource.
// Names that do not resolve are returned as unresolved, one FieldError
// each, and left out of the set so that the rest can still be enforced.
// Two rules that select every object of one resource and want different
// things of one key are a conflict: Compile returns an *Error naming both.
// So are rules whose selectors test each other's labels in a cycle (see
// unsettled), and a when condition that reads a key a rule sets (see
// whenUnsettled), on one resource that they name in different ways, which
// Parse cannot tell is one.
// (Rules that select only some objects may never meet; when they do, file
// order decides, and Evaluate reports it.)
func Compile(name string, f *rulefile.File, resolve ResolveFunc) (set *Set, unresolved []rulefile.FieldError, err error) {
	set = &Set{Targets: map[schema.GroupVersionResource]*Target{}}
	// Keyed by group and resource: two names for one resource at two
	// versions are the same objects, enforced at the first version named.
	byGR := map[schema.GroupResource]*Target{}
	for i, r := range f.Rules {
		c, cerr := compileRule(r, i)
		if cerr != nil {
			return nil, nil, &rulefile.Error{File: name, Fields: []rulefile.FieldError{{Field: fmt.Sprintf("rules[%d]", i), Message: cerr.Error()}}}
		}
		unresolved = append(unresolved, c.resolveOwners(resolve)...)
		unresolved = append(unresolved, c.resolveRefs(resolve)...)
		for j, res := range r.Resources {
			rr, rerr := resolve(res)
			if rerr != nil {
				unresolved = append(unresolved, rulefile.FieldError{Field: fmt.Sprintf("rules[%d].resources[%d]", i, j), Message: rerr.Error()})
				continue
			}
			gr := rr.GVR.GroupResource()
			t := byGR[gr]
			if t == nil {
				t = &Target{Resource: rr}
				byGR[gr] = t
				set.Targets[rr.GVR] = t
			}
			if len(t.Rules) == 0 || t.Rules[len(t.Rules)-1].Index != i {
				t.Rules = append(t.Rules, c)
			}
		}
	}
	var conflicts []rulefile.FieldError
	reported, whenReported := map[int]bool{}, map[string]bool{}
	targets := set.SortedTargets()
	reads := compiledWhenReads(targets)
	conflicts = append(conflicts, lint.SourceCycles(f, flows(targets))...)
	for _, t := range targets {
		conflicts = append(conflicts, lint.StaticConflicts(f, t.ruleIndexes(), source.GVRString(t.GVR))...)
		conflicts = append(conflicts, refScopes(f, t)...)
		conflicts = append(conflicts, lint.Cycles(f.Rules, t.ruleIndexes(), t.isNamespaces(), reported)...)
		conflicts = append(conflicts, lint.WhenUnsettled(f.Rules, t.ruleIndexes(), reads, whenReported)...)
		static := true
		for _, r := range t.Rules {
			t.ReadsObjects = t.ReadsObjects || r.ReadsFields()
			t.NeedsNamespaceLabels = t.NeedsNamespaceLabels || r.NamespaceSelector != "" || r.readsNamespaceObject()
			t.ReadsNamespaces = t.ReadsNamespaces || r.ReadsNamespace()
			static = static && !r.Selective() && !r.ReadsObject() && !r.ReadsNamespace()
		}
		t.sources = t.neededSources()
		if static {
			t.static = t.Evaluate(&metav1.ObjectMeta{}, nil)
		} else {
			t.memo = newSelectionMemo(t)
		}
	}
	if len(conflicts) > 0 {
		return nil, unresolved, &rulefile.Error{File: name, Fields: conflicts}
	}
	return set, unresolved, nil
}

// flows returns the values the rules of targets read from other objects,
// as lint.SourceCycles follows them.
func flows(targets []*Target) []lint.Flow {
	var out []lint.Flow
	for _, t := range targets {
		for _, c := range t.Rules {
			for _, kind := range kinds {
				for _, level := range c.Of(kind).Levels() { // a default's form reads too
					for _, r := range c.readers().Reads(level, kind) {
						out = append(out, lint.Flow{Rule: c.Index, Field: r.Field, To: source.GVRString(t.GVR), Kind: kind, Key: r.Key,
							From: source.GVRString(r.From.Resource.GVR), FromKind: r.FromKind, FromKey: r.FromKey})
					}
				}
			}
		}
	}
	return out
}

// compiledWhenReads reads what each compiled rule's condition reads.
func compiledWhenReads(targets []*Target) lint.WhenReads {
	byIndex := map[int]*Compiled{}
	for _, t := range targets {
		for _, c := range t.Rules {
			byIndex[c.Index] = c
		}
	}
	return func(i int) [][]string {
		if c := byIndex[i]; c != nil && c.sel.When != nil {
			return c.sel.When.Reads
		}
		return nil
	}
}
