package rules

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/rules/value"
)

// kinds are the kinds of metadata a rule sets, in the order a rule's
// wants are computed: annotations, then labels.
var kinds = [...]string{rulefile.AnnotationKind, rulefile.LabelKind}

// compiledKind is what a compiled rule reads to set one kind of metadata:
// its JSONPath templates and CEL expressions, by key.
type compiledKind struct {
	kind string
	from map[string]*value.Template
	cel  map[string]*celexpr.Expr
	// fallback are the JSONPath templates of the value forms given as
	// defaults, by level (see rulefile.Metadata.Levels).
	fallback map[*rulefile.Metadata]map[string]*value.Template
	// copyCEL are the expressions of the key sets computed in CEL, by
	// their index in the kind's Copy; nil for the others.
	copyCEL []*celexpr.Expr
}

// compileKinds compiles the JSONPath and CEL values of both kinds of c.
func (c *Compiled) compileKinds() error {
	for i, kind := range kinds {
		m := c.Of(kind)
		k := &c.kinds[i]
		k.kind = kind
		k.fallback = map[*rulefile.Metadata]map[string]*value.Template{}
		var err error
		if k.from, err = value.Templates(m.From); err != nil {
			return err
		}
		if k.cel, err = celexpr.CompileAll(m.CEL); err != nil {
			return fmt.Errorf("%ss: %w", kind, err)
		}
		for _, l := range m.Levels()[1:] {
			if k.fallback[l], err = value.Templates(l.From); err != nil {
				return err
			}
		}
		k.copyCEL = make([]*celexpr.Expr, len(m.Copy))
		for j, set := range m.Copy {
			if set.CEL == "" {
				continue
			}
			if k.copyCEL[j], err = celexpr.Compile(set.CEL, celexpr.StringMapType); err != nil {
				return fmt.Errorf("copy: %w", err)
			}
		}
	}
	c.values = celexpr.Sorted(c.kinds[0].cel, c.kinds[1].cel)
	for _, k := range c.kinds {
		for _, e := range k.copyCEL {
			if e != nil {
				c.values = append(c.values, e)
			}
		}
	}
	return nil
}

// kind returns the compiledKind of kind.
func (c *Compiled) kind(kind string) *compiledKind {
	return &c.kinds[slices.Index(kinds[:], kind)]
}

// readsFields reports whether c reads a value with JSONPath, which may
// read any field of the object.
func (c *Compiled) readsFields() bool {
	return slices.ContainsFunc(c.kinds[:], func(k compiledKind) bool {
		return len(k.from) > 0 || slices.ContainsFunc(slices.Collect(maps.Values(k.fallback)), func(t map[string]*value.Template) bool { return len(t) > 0 })
	})
}

// validValue returns what makes v no valid value of kind; nil when it is
// one.
func validValue(kind string) func(v string) []string {
	if kind == rulefile.LabelKind {
		return validation.IsValidLabelValue
	}
	return value.ValidAnnotation
}

// contribute adds what the rule wants of obj's metadata of kind k to e,
// as Compiled.contribute says.
func (k *compiledKind) contribute(e *Evaluation, c *Compiled, obj metav1.Object, h home) {
	m, valid := c.Of(k.kind), validValue(k.kind)
	read, m1 := value.FromTemplates(k.from, obj, valid)
	fromNS, m2 := value.FromNamespace(m.FromNamespace, h.obj, h.why, valid)
	cel, m3 := celValues(k.cel, obj, h, valid)
	related, inputs, m4 := c.readers().Related(m.FromRelated, obj, h.look, valid)
	fallback := func(l *rulefile.Metadata, key string) (string, value.Missing, bool) {
		read, m1 := value.FromTemplates(k.fallback[l], obj, valid)
		fromNS, m2 := value.FromNamespace(l.FromNamespace, h.obj, h.why, valid)
		related, in, m4 := c.readers().Related(l.FromRelated, obj, h.look, valid)
		if v, ok := spec.Joined(read, spec.Joined(fromNS, related))[key]; ok {
			inputs = spec.Put(inputs, key, in[key])
			return v, value.Missing{}, true
		}
		return "", slices.Concat(m1, m2, m4)[0], false
	}
	read = e.orDefault(spec.Joined(read, spec.Joined(cel, related)), slices.Concat(m1, m2, m3, m4), m, fallback, c.Name, k.kind)
	copied, copiedFrom, problems := c.readers().Copied(m, obj, h.obj, h.why, h.look, valid, k.celCopy(obj, h))
	for _, p := range problems {
		e.Problems = append(e.Problems, c.Name+": "+p)
	}
	set, ifAbsent, remove := desiredOf(&e.Desired, k.kind)
	*set = e.merge(*set, m.Values, read, fromNS, c.Name, k.kind)
	*set = e.merge(*set, copied, nil, nil, c.Name, k.kind)
	e.recordInputs(inputs, c.Name, k.kind)
	e.recordOnce(m.Once, c.Name, k.kind)
	e.recordOnce(value.RecordedCopies(m, obj, k.kind, copied), c.Name, k.kind)
	e.recordInputs(copiedFrom, c.Name, k.kind)
	*ifAbsent = e.ifAbsent(*ifAbsent, *set, m.IfAbsent, c.Name, k.kind, m.Values, read, fromNS)
	*ifAbsent = e.ifAbsent(*ifAbsent, *set, everyKey(copied), c.Name, k.kind, copied) // a copy never changes another's key
	*remove = append(*remove, m.Remove...)
	e.removedBy = attribute(e.removedBy, k.kind, m.Remove, c.Name)
}

// desiredOf returns the keys of kind that d sets, sets only where absent,
// and removes.
func desiredOf(d *patch.Desired, kind string) (set *map[string]string, ifAbsent *map[string]bool, remove *[]string) {
	if kind == rulefile.LabelKind {
		return &d.Labels, &d.IfAbsentLabels, &d.RemoveLabels
	}
	return &d.Annotations, &d.IfAbsentAnnotations, &d.RemoveAnnotations
}

// everyKey returns m's keys, each mapped to true.
func everyKey(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// readers returns what finds the objects c reads besides the object and
// its namespace.
func (c *Compiled) readers() value.Readers { return value.Readers{Owners: c.owners, Refs: c.refs} }

// celCopy returns what computes the keys and values of the i-th key set
// of k computed in CEL, for obj, whose namespace is h.
func (k *compiledKind) celCopy(obj metav1.Object, h home) func(i int) (map[string]string, string) {
	return func(i int) (map[string]string, string) {
		v, err := h.outcome(k.copyCEL[i], obj)
		if err != nil {
			return nil, err.Error()
		}
		m, ok := v.(map[string]string)
		if !ok {
			return nil, fmt.Sprintf("yields a %T, not a map of strings", v)
		}
		return m, ""
	}
}
