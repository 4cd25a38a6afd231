package rules

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kube-annotator/kube-annotator/pkg/glob"
	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Compiled is one rule ready to be evaluated against objects.
type Compiled struct {
	rulefile.Rule
	// Index is the rule's position in the file.
	Index int

	selector, namespaceSelector labels.Selector
	annotationsFrom, labelsFrom map[string]*template
	when                        *celexpr.Expr
	annotationsCEL, labelsCEL   map[string]*celexpr.Expr
	values                      []*celexpr.Expr // annotationsCEL then labelsCEL, each by key
	owners                      map[*rulefile.Owners]*source.Walk
	refs                        map[*rulefile.Refs]*source.Refer
}

// template is a parsed JSONPath template. Executing one is not safe for
// concurrent use, hence the lock.
type template struct {
	mu sync.Mutex
	jp *jsonpath.JSONPath
}

func compileRule(r rulefile.Rule, index int) (*Compiled, error) {
	c := &Compiled{Rule: r, Index: index}
	var err error
	if r.Selector != "" {
		if c.selector, err = labels.Parse(r.Selector); err != nil {
			return nil, err
		}
	}
	if r.NamespaceSelector != "" {
		if c.namespaceSelector, err = labels.Parse(r.NamespaceSelector); err != nil {
			return nil, err
		}
	}
	if c.annotationsFrom, err = templates(r.AnnotationsFrom); err != nil {
		return nil, err
	}
	if c.labelsFrom, err = templates(r.LabelsFrom); err != nil {
		return nil, err
	}
	if r.When != "" {
		if c.when, err = celexpr.Compile(r.When, celexpr.BoolType); err != nil {
			return nil, fmt.Errorf("when: %w", err)
		}
	}
	if c.annotationsCEL, err = compileCELs(r.AnnotationsCEL); err != nil {
		return nil, fmt.Errorf("annotations: %w", err)
	}
	if c.labelsCEL, err = compileCELs(r.LabelsCEL); err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	c.values = sortedExprs(c.annotationsCEL, c.labelsCEL)
	return c, nil
}

func templates(from map[string]string) (map[string]*template, error) {
	if len(from) == 0 {
		return nil, nil
	}
	out := make(map[string]*template, len(from))
	for k, tmpl := range from {
		jp := jsonpath.New(k)
		if err := jp.Parse(tmpl); err != nil {
			return nil, err
		}
		out[k] = &template{jp: jp}
	}
	return out, nil
}

// ReadsObject reports whether the rule reads values from the object: with
// JSONPath, CEL, or the field that names a related object (fromNode).
func (c *Compiled) ReadsObject() bool {
	return len(c.annotationsFrom)+len(c.labelsFrom) > 0 || len(c.celExprs()) > 0 || c.readsRelated()
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
	if why := c.unselectedBy(obj, isNamespace, namespaces); why != "" {
		return why
	}
	return c.whenFails(obj, isNamespace, namespaces)
}

// unselectedBy returns why the rule's label, name and namespace criteria
// do not select obj, or "".
func (c *Compiled) unselectedBy(obj metav1.Object, isNamespace bool, namespaces source.Lookup) string {
	if c.selector != nil && !c.selector.Matches(labels.Set(obj.GetLabels())) {
		return fmt.Sprintf("selector %q does not match the object's labels", c.Selector)
	}
	if len(c.Names) > 0 && !glob.Any(c.Names, obj.GetName()) {
		return fmt.Sprintf("names %q do not match %q", c.Names, obj.GetName())
	}
	ns := obj.GetNamespace()
	if isNamespace {
		ns = obj.GetName()
	}
	if ns == "" {
		return "" // cluster-scoped: namespace criteria do not apply
	}
	if len(c.Namespaces) > 0 && !glob.Any(c.Namespaces, ns) {
		return fmt.Sprintf("namespaces %q do not match namespace %q", c.Namespaces, ns)
	}
	if glob.Any(c.ExcludeNamespaces, ns) {
		return fmt.Sprintf("excludeNamespaces %q match namespace %q", c.ExcludeNamespaces, ns)
	}
	if c.namespaceSelector != nil {
		var set labels.Set
		if isNamespace {
			set = labels.Set(obj.GetLabels())
		} else if m, ok := source.NamespaceOf(namespaces, ns); ok {
			set = labels.Set(m.GetLabels())
		} else {
			// Not known yet; its arrival enqueues its objects.
			return fmt.Sprintf("namespaceSelector %q: namespace %q is not known", c.NamespaceSelector, ns)
		}
		if !c.namespaceSelector.Matches(set) {
			return fmt.Sprintf("namespaceSelector %q does not match the labels of namespace %q", c.NamespaceSelector, ns)
		}
	}
	return ""
}

// values evaluates templates against obj. A template whose field is
// missing, or whose result is not a valid value, sets nothing; it is
// returned in missing.
func values(from map[string]*template, obj metav1.Object, valid func(string) []string) (map[string]string, []missing) {
	if len(from) == 0 {
		return nil, nil
	}
	u, ok := obj.(runtime.Unstructured)
	if !ok {
		var miss []missing
		for _, k := range slices.Sorted(maps.Keys(from)) {
			miss = append(miss, missing{k, fmt.Sprintf("the cache holds only the metadata of %T; values cannot be read", obj), ReasonError, ""})
		}
		return nil, miss
	}
	content := u.UnstructuredContent()
	var out map[string]string
	var miss []missing
	for k, t := range from {
		var buf bytes.Buffer
		t.mu.Lock()
		err := t.jp.Execute(&buf, content)
		t.mu.Unlock()
		if err != nil {
			miss = append(miss, missing{k, err.Error(), ReasonSourceMissing, ""})
			continue
		}
		v := buf.String()
		if msgs := valid(v); len(msgs) > 0 {
			miss = append(miss, missing{k, fmt.Sprintf("the value read (%d bytes) is not valid: %s", len(v), strings.Join(msgs, "; ")), ReasonInvalid, v})
			continue
		}
		out = put(out, k, v)
	}
	return out, miss
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
	anns, m1 := values(c.annotationsFrom, obj, validAnnotationValue)
	lbls, m2 := values(c.labelsFrom, obj, validation.IsValidLabelValue)
	nsAnns, m3 := namespaceValues(c.AnnotationsFromNamespace, h.obj, h.why, validAnnotationValue)
	nsLbls, m4 := namespaceValues(c.LabelsFromNamespace, h.obj, h.why, validation.IsValidLabelValue)
	celAnns, m5 := celValues(c.annotationsCEL, obj, h, validAnnotationValue)
	celLbls, m6 := celValues(c.labelsCEL, obj, h, validation.IsValidLabelValue)
	relAnns, inAnns, m7 := c.relatedValues(c.AnnotationsFromRelated, obj, h.look, validAnnotationValue)
	relLbls, inLbls, m8 := c.relatedValues(c.LabelsFromRelated, obj, h.look, validation.IsValidLabelValue)
	anns = e.orDefault(rulefile.Joined(anns, rulefile.Joined(celAnns, relAnns)), slices.Concat(m1, m3, m5, m7), c.AnnotationsDefault, nil, c.Name, rulefile.AnnotationKind)
	lbls = e.orDefault(rulefile.Joined(lbls, rulefile.Joined(celLbls, relLbls)), slices.Concat(m2, m4, m6, m8), c.LabelsDefault, c.LabelsIfInvalid, c.Name, rulefile.LabelKind)
	e.Desired.Annotations = e.merge(e.Desired.Annotations, c.Annotations, anns, nsAnns, c.Name, rulefile.AnnotationKind)
	e.Desired.Labels = e.merge(e.Desired.Labels, c.Labels, lbls, nsLbls, c.Name, rulefile.LabelKind)
	e.recordInputs(inAnns, c.Name, rulefile.AnnotationKind)
	e.recordInputs(inLbls, c.Name, rulefile.LabelKind)
	e.Desired.IfAbsentAnnotations = e.ifAbsent(e.Desired.IfAbsentAnnotations, e.Desired.Annotations, c.AnnotationsIfAbsent, c.Name, rulefile.AnnotationKind,
		c.Annotations, anns, nsAnns)
	e.Desired.IfAbsentLabels = e.ifAbsent(e.Desired.IfAbsentLabels, e.Desired.Labels, c.LabelsIfAbsent, c.Name, rulefile.LabelKind, c.Labels, lbls, nsLbls)
	e.Desired.RemoveAnnotations = append(e.Desired.RemoveAnnotations, c.RemoveAnnotations...)
	e.Desired.RemoveLabels = append(e.Desired.RemoveLabels, c.RemoveLabels...)
	e.removedBy = attribute(e.removedBy, rulefile.AnnotationKind, c.RemoveAnnotations, c.Name)
	e.removedBy = attribute(e.removedBy, rulefile.LabelKind, c.RemoveLabels, c.Name)
}

// attribute records rule as the remover of keys of kind, unless an earlier
// rule removes them.
func attribute(by map[keyOf]string, kind string, keys []string, rule string) map[keyOf]string {
	for _, k := range keys {
		if _, ok := by[keyOf{kind, k}]; !ok {
			by = put(by, keyOf{kind, k}, rule)
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

	setBy     map[keyOf]string // rule that set the key
	removedBy map[keyOf]string // first rule that removes the key
	defaulted map[keyOf]string // why a rule's default is set
	madeValid map[keyOf]string // how a value read was made valid (for explain, of a rule alone)
	inputs    map[keyOf]string // where a related value was read
	held      map[keyOf]string // rule whose expression failed for the key: see Held
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
			e.setBy = put(e.setBy, keyOf{kind, k}, rule)
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
				into = put(into, k, true)
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

// validAnnotationValue bounds a value read from the object: it must fit in
// the API server's limit for all annotations together.
func validAnnotationValue(v string) []string {
	if len(v) > apivalidation.TotalAnnotationSizeLimitB {
		return []string{fmt.Sprintf("%d bytes, more than annotations may hold (%d)", len(v), apivalidation.TotalAnnotationSizeLimitB)}
	}
	return nil
}

// put sets m[k] to v, making m when nil.
func put[K comparable, V any](m map[K]V, k K, v V) map[K]V {
	if m == nil {
		m = map[K]V{}
	}
	m[k] = v
	return m
}
