package rulefile

import (
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/rules/labelvalue"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// metadataValues is the Metadata of one kind that the decoder fills.
type metadataValues struct {
	*Metadata
	kind string // AnnotationKind or LabelKind
	// readsRequest is the CEL value of the key being decoded when it
	// reads the admission request, for valueForm to check it is recorded.
	readsRequest *yaml.Node
}

// literal stores s, the literal value of key found at path p, checking it
// is a valid value of into's kind.
func (d *decoder) literal(v *yaml.Node, p, key, s string, into *metadataValues) {
	if into.kind == LabelKind {
		for _, msg := range validation.IsValidLabelValue(s) {
			d.Errorf(v, p, "invalid label value %q: %s", s, msg)
		}
	}
	into.Values = spec.Put(into.Values, key, s)
}

// valueForm is a value that is read rather than given: a mapping with one
// field, name.
type valueForm struct {
	name string
	// how says, in errors, how to write it and what it reads.
	how string
	// decode checks the field's value v, found at path p, and stores it as
	// the value of key in into.
	decode func(d *decoder, v *yaml.Node, p, key string, into *metadataValues)
	// doc describes the form, in the JSON Schema.
	doc string
	// value is the JSON Schema of the field's value for a key of kind.
	value func(kind string) *jsonSchema
	// computed forms read their value from a source that may lack it; they
	// accept a default, set when it does, which may be another computed
	// form unless it is selfContained.
	computed bool
	// selfContained forms write their own fallbacks, so they are never a
	// default.
	selfContained bool
}

// valueForms are the value forms of annotations and labels, in the order
// the docs list them: the one table of them.
var valueForms = []valueForm{
	{name: "value", how: `{value: "…"}, the same`,
		doc:   "A literal value, as a plain string gives it.",
		value: literalSchema,
		decode: func(d *decoder, v *yaml.Node, p, key string, into *metadataValues) {
			if s, ok := d.Value(v, p); ok {
				d.literal(v, p, key, s, into)
			}
		}},
	{name: "jsonPath", how: "{jsonPath: '{.path.to.field}'} to read it from the object",
		doc: "The value read from the object with a kubectl JSONPath template. When the field is missing " +
			"(or, for a label, is no valid label value and no ifInvalid makes it one) the key is not set.",
		value:    func(string) *jsonSchema { return ref(defJSONPath) },
		computed: true,
		decode: func(d *decoder, v *yaml.Node, p, key string, into *metadataValues) {
			if tmpl, ok := d.jsonPathValue(v, p); ok {
				into.From = spec.Put(into.From, key, tmpl)
			}
		}},
	{name: "cel", how: `{cel: "…"} to compute it with a CEL expression`,
		doc: "The string a CEL expression yields for the object, read as in admission policies (object, namespaceObject; " +
			"request, who asks and what, in a recorded value only, set at creation). " +
			"An error, or a result that is not a string, keeps the value the object has (the default where it has none); " +
			"for a label, no valid label value leaves the key unset, unless ifInvalid makes it one.",
		value:    func(string) *jsonSchema { return &jsonSchema{Type: "string", MinLength: 1} },
		computed: true, selfContained: true,
		decode: func(d *decoder, v *yaml.Node, p, key string, into *metadataValues) {
			if src, ok := d.celValue(v, p, key, into); ok {
				into.CEL = spec.Put(into.CEL, key, src)
			}
		}},
	{name: "fromNamespace", how: "{fromNamespace: {label: KEY}} to read a label (or annotation) of its namespace",
		doc: "The value of a label or annotation of the object's namespace (of the Namespace itself, for the namespaces " +
			"resource); it follows the namespace when that changes.",
		value:    func(string) *jsonSchema { return ref(defFromNamespace) },
		computed: true,
		decode: func(d *decoder, v *yaml.Node, p, key string, into *metadataValues) {
			if k, ok := d.fromNamespace(v, p); ok {
				into.FromNamespace = spec.Put(into.FromNamespace, key, k)
			}
		}},
	relatedForm(source.Node, "{fromNode: {label: KEY}} to read a label (or annotation) of a Pod's Node",
		"The value of a label or annotation of the Node a Pod runs on (spec.nodeName), for pods only; it follows the Node "+
			"when that changes, and is set once a Pod not yet scheduled is."),
	ownerForm,
	refForm,
}

// relatedForm is the value form that reads a label or annotation of the
// related objects of src.
func relatedForm(src *source.Source, how, doc string) valueForm {
	return valueForm{name: src.Field, how: how, doc: doc, computed: true,
		value: func(string) *jsonSchema { return ref(src.Field) },
		decode: func(d *decoder, v *yaml.Node, p, key string, into *metadataValues) {
			if k, ok := d.relatedKey(v, p, src); ok {
				into.FromRelated = spec.Put(into.FromRelated, key, k)
			}
		}}
}

// valueFormNames are the fields of valueForms.
var valueFormNames = func() []string {
	out := make([]string, len(valueForms))
	for i, f := range valueForms {
		out[i] = f.name
	}
	return out
}()

// valueFormsHow says how to write a value, in errors.
var valueFormsHow = func() string {
	var parts []string
	for _, f := range valueForms {
		parts = append(parts, f.how)
	}
	return "a string, " + strings.Join(parts, ", or ") + " (any mapping may add ifAbsent: true, to set the key only where it is absent; " +
		"a computed one, " + strings.Join(computedFormNames, " or ") + `, may add default: "…", set when its source is missing)`
}()

// computedFormNames are the names of the computed valueForms, which take a
// default.
var computedFormNames = func() []string {
	var out []string
	for _, f := range valueForms {
		if f.computed {
			out = append(out, f.name)
		}
	}
	return out
}()

// ifAbsentField is the field that, next to any of valueForms, makes the
// key set only where it is absent.
const ifAbsentField = "ifAbsent"

// defaultField is the field that, next to a computed value form, gives the
// value set when its source is missing.
const defaultField = "default"

// ifInvalidField is the field that, next to a computed value form of a
// label, says how a value read that is no valid label value is made one.
const ifInvalidField = "ifInvalid"

// valueFields are the fields a value mapping may hold.
var valueFields = append(slices.Clone(valueFormNames), ifAbsentField, defaultField, ifInvalidField, onceField)

// metadata decodes an annotations or labels mapping into m: keys to
// literal string values, or to one of the valueForms.
func (d *decoder) metadata(n *yaml.Node, path, kind string, m *Metadata) {
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "must be a mapping of %s keys to string values, got %s", kind, yamlfield.Describe(n))
		return
	}
	if len(n.Content) == 0 {
		d.Errorf(n, path, "must set at least one %s", kind)
		return
	}
	out := metadataValues{Metadata: m, kind: kind}
	d.Fields(n, path, nil, func(key, p string, v *yaml.Node) {
		d.LineOf(p, v)
		d.metadataKey(d.KeyLine, p, kind, key)
		if v.Kind == yaml.MappingNode {
			d.valueForm(v, p, key, &out)
			return
		}
		if s, ok := d.Value(v, p); ok {
			d.literal(v, p, key, s, &out)
		}
	})
	size := 0
	for k, v := range out.Values {
		size += len(k) + len(v)
	}
	if kind == AnnotationKind && size > apivalidation.TotalAnnotationSizeLimitB {
		d.Errorf(n, path, "annotations total %d bytes, more than the API server accepts (%d)", size, apivalidation.TotalAnnotationSizeLimitB)
	}
}

// valueForm decodes n, the mapping given as the value of key at path p:
// exactly one of valueForms.
func (d *decoder) valueForm(n *yaml.Node, p, key string, into *metadataValues) {
	if !slices.ContainsFunc(valueFormNames, func(name string) bool { return hasKey(n, name) }) {
		switch {
		case hasKey(n, ifAbsentField):
			d.Errorf(n, p, "ifAbsent says when to set a value, but none is given: add %s", strings.Join(valueFormNames, ", "))
		case hasKey(n, defaultField):
			d.Errorf(n, p, "default is set when a computed value's source is missing, but none is given: add %s", strings.Join(computedFormNames, ", "))
		case hasKey(n, ifInvalidField):
			d.Errorf(n, p, "ifInvalid makes a computed value a valid label value, but none is given: add %s", strings.Join(computedFormNames, ", "))
		case hasKey(n, onceField):
			d.Errorf(n, p, "once records a computed value, but none is given: add %s", strings.Join(computedFormNames, ", "))
		default:
			d.Errorf(n, p, "value must be %s; got a mapping", valueFormsHow)
		}
		return
	}
	var given []string
	var def, fix, once *yaml.Node
	into.readsRequest = nil
	d.LineOf(p, n)
	d.Fields(n, p, valueFields, func(name, fp string, v *yaml.Node) {
		switch name {
		case ifAbsentField:
			if d.Boolean(v, fp) {
				into.IfAbsent = spec.Put(into.IfAbsent, key, true)
			}
			return
		case defaultField:
			def = v
			return
		case ifInvalidField:
			fix = v
			return
		case onceField:
			once = v
			return
		}
		given = append(given, name)
		if len(given) > 1 {
			return
		}
		i := slices.Index(valueFormNames, name)
		valueForms[i].decode(d, v, fp, key, into)
	})
	if len(given) > 1 {
		d.Errorf(n, p, "gives both %s; a value is read one way", strings.Join(given, " and "))
		delete(into.Values, key)
		delete(into.From, key)
		delete(into.CEL, key)
		delete(into.FromNamespace, key)
		delete(into.FromRelated, key)
		delete(into.IfAbsent, key)
		return
	}
	if def != nil && len(given) == 1 {
		d.defaultValue(def, FieldPath(p, defaultField), key, given[0], into)
	}
	if fix != nil && len(given) == 1 {
		d.ifInvalid(fix, FieldPath(p, ifInvalidField), key, given[0], into)
	}
	if once != nil && len(given) == 1 {
		d.once(once, FieldPath(p, onceField), key, given[0], into)
	}
	if len(given) == 1 {
		d.requestRecorded(into.readsRequest, FieldPath(p, given[0]), key, into)
	}
}

// ifInvalid decodes v, the ifInvalid given at path p next to form, the
// value form of key: one of labelvalue.Modes, for a computed label value.
func (d *decoder) ifInvalid(v *yaml.Node, p, key, form string, into *metadataValues) {
	switch {
	case into.kind != LabelKind:
		d.Errorf(v, p, "an annotation value may be any string, so it takes no ifInvalid; ifInvalid makes a computed label value a valid label value")
		return
	case !slices.Contains(computedFormNames, form):
		d.Errorf(v, p, "a %s is checked when the file is loaded, so it takes no ifInvalid; ifInvalid goes with a computed value: %s", form, strings.Join(computedFormNames, ", "))
		return
	}
	s, ok := d.Str(v, p)
	if !ok {
		return
	}
	if !slices.Contains(labelvalue.Modes, s) {
		d.Errorf(v, p, "must be %s, got %q", labelvalue.ModesText, s)
		return
	}
	into.IfInvalid = spec.Put(into.IfInvalid, key, s)
}

// defaultValue decodes v, the default given at path p next to form, the
// value form of key.
func (d *decoder) defaultValue(v *yaml.Node, p, key, form string, into *metadataValues) {
	if !slices.Contains(computedFormNames, form) {
		d.Errorf(v, p, "a %s is always set, so it takes no default; a default goes with a computed value: %s", form, strings.Join(computedFormNames, ", "))
		return
	}
	if v.Kind == yaml.MappingNode {
		d.fallback(v, p, key, into)
		return
	}
	s, ok := d.Value(v, p)
	if !ok {
		return
	}
	if into.kind == LabelKind {
		for _, msg := range validation.IsValidLabelValue(s) {
			d.Errorf(v, p, "invalid label value %q: %s", s, msg)
			return
		}
	}
	into.Default = spec.Put(into.Default, key, s)
}

// fallback decodes n, a value form given as the default of key at path
// p: read when the form before it gives no valid value.
func (d *decoder) fallback(n *yaml.Node, p, key string, into *metadataValues) {
	switch {
	case d.depth == spec.MaxFallbacks:
		d.Errorf(n, p, "a default chain holds at most %d value forms after the key's own; end it with a literal default", spec.MaxFallbacks)
		return
	case hasKey(n, ifAbsentField):
		d.Errorf(n, p, "ifAbsent says when the key is set, so it goes next to the key's first value form, not in a default")
		return
	case hasKey(n, onceField):
		d.Errorf(n, p, "once says the key is recorded, so it goes next to the key's first value form, not in a default")
		return
	case slices.ContainsFunc(valueForms, func(f valueForm) bool { return f.selfContained && hasKey(n, f.name) }):
		d.Errorf(n, p, "a cel expression is the key's value or none; write its fallbacks in CEL (has(…) ? … : …)")
		return
	}
	level := metadataValues{Metadata: &Metadata{}, kind: into.kind}
	d.depth++
	d.valueForm(n, p, key, &level)
	d.depth--
	if s, ok := level.Values[key]; ok { // {value: "…"}: a literal
		into.Default = spec.Put(into.Default, key, s)
	} else if len(level.Computed()) > 0 {
		into.Fallback = spec.Put(into.Fallback, key, level.Metadata)
	}
}

// metadataKey reports an invalid annotation or label key (see
// spec.KeyProblems).
func (d *decoder) metadataKey(line int, path, kind, key string) {
	for _, msg := range spec.KeyProblems(kind, key) {
		d.Errs = append(d.Errs, FieldError{Line: line, Field: path, Message: msg})
	}
}

// keys decodes a list of annotation or label keys to remove.
func (d *decoder) keys(n *yaml.Node, path, kind string) []string {
	return d.UniqueList(n, path, kind+" keys", "must name at least one "+kind+" key", "key", func(item *yaml.Node, p, s string) bool {
		d.metadataKey(item.Line, p, kind, s)
		return true
	})
}

// hasKey reports whether mapping n has key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if yamlfield.Deref(n.Content[i]).Value == key {
			return true
		}
	}
	return false
}
