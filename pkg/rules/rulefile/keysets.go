package rulefile

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"

	"github.com/kube-annotator/kube-annotator/pkg/glob"
	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// copyFrom are the sources a copy item reads, by the field that names
// them: the value forms that read one key of the same objects.
var copyFrom = []*source.Source{source.Namespace, source.Node, source.Owner, source.Ref}

// copyFields are the fields of a copy item's source mapping besides the
// owner's: the kind copied, and exclusions.
const exceptField = "except"

// copyItems decodes a rule's copy: a list of {SOURCE: {labels|annotations:
// [GLOB, …], except: [GLOB, …]}} into the Metadata of r they copy.
func (d *decoder) copyItems(n *yaml.Node, p string, r *Rule) {
	switch {
	case n.Kind != yaml.SequenceNode:
		d.Errorf(n, p, "must be a list of {fromNamespace|fromNode|fromOwner|fromRef: {labels: [GLOB, …]}}, got %s", yamlfield.Describe(n))
		return
	case len(n.Content) == 0:
		d.Errorf(n, p, "must not be empty; leave the field out to copy nothing")
		return
	}
	names := make([]string, len(copyFrom), len(copyFrom)+1)
	for i, src := range copyFrom {
		names[i] = src.Field
	}
	names = append(names, spec.CELField)
	for i, item := range n.Content {
		ip := fmt.Sprintf("%s[%d]", p, i)
		item = yamlfield.Deref(item)
		d.LineOf(ip, item)
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
			d.Errorf(item, ip, "must be a mapping with one of %s, got %s", strings.Join(names, ", "), yamlfield.Describe(item))
			continue
		}
		d.Fields(item, ip, names, func(field, fp string, v *yaml.Node) {
			d.LineOf(fp, v)
			if field == spec.CELField {
				if set, ok := d.celKeySet(v, fp); ok {
					m := r.Of(set.Kind)
					set.Item = i
					m.Copy = append(m.Copy, set)
				}
				return
			}
			src := copyFrom[slices.Index(names, field)]
			if set, ok := d.keySet(v, fp, src); ok {
				m := r.Of(set.Kind)
				set.Item = i
				m.Copy = append(m.Copy, set)
			}
		})
	}
}

// keySet decodes {labels: [GLOB, …]} or {annotations: [GLOB, …]}, with
// except: [GLOB, …] and once: true, and for an owner owner: and through:, the source
// mapping of a copy item that reads src, found at path p.
func (d *decoder) keySet(n *yaml.Node, p string, src *source.Source) (KeySet, bool) {
	set := KeySet{Source: src}
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, p, "must be {labels: [GLOB, …]} or {annotations: [GLOB, …]}, with except: [GLOB, …] if need be, got %s", yamlfield.Describe(n))
		return set, false
	}
	before := len(d.Errs)
	known := []string{LabelKind + "s", AnnotationKind + "s", exceptField, onceField}
	var res source.RefResource
	switch {
	case src.IsOwner:
		set.Owners = &Owners{}
		known = append(known, ownerField, throughField)
	case src == source.Ref:
		set.Refs = &Refs{}
		known = append(known, refFields...)
	}
	var kinds []string
	seen := d.Fields(n, p, known, func(k, fp string, v *yaml.Node) {
		if set.Refs != nil && d.refField(k, fp, v, set.Refs, &res) {
			return
		}
		switch k {
		case exceptField:
			set.Except = d.keyGlobs(v, fp)
		case onceField:
			set.Once = d.Boolean(v, fp)
		case ownerField:
			set.Owners.Hop = d.ownerResource(v, fp)
		case throughField:
			set.Owners.Through = d.ownerResources(v, fp)
		default:
			set.Kind = strings.TrimSuffix(k, "s")
			kinds = append(kinds, k)
			set.Keys = d.keyGlobs(v, fp)
		}
	})
	switch len(kinds) {
	case 0:
		d.Errorf(n, p, "must name the keys of %s to copy: {labels: [GLOB, …]} or {annotations: [GLOB, …]}", src.What)
	case 2:
		d.Errorf(n, p, "gives both labels and annotations; copy one kind per item, in two items")
	}
	if set.Owners != nil {
		set.Owners.Complete()
	}
	if set.Refs != nil && len(kinds) > 0 {
		d.refShape(n, p, set.Refs, res, seen, []string{set.Kind})
	}
	return set, len(d.Errs) == before
}

// celKeySet decodes {labels: "EXPR"} or {annotations: "EXPR"}, the CEL
// item of a copy found at path p: an expression yielding a map of keys to
// values, such as one annotation per container.
func (d *decoder) celKeySet(n *yaml.Node, p string) (KeySet, bool) {
	set := KeySet{}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		d.Errorf(n, p, `must be {labels: "EXPR"} or {annotations: "EXPR"}, an expression yielding a map of keys to values, got %s`, yamlfield.Describe(n))
		return set, false
	}
	ok := false
	d.Fields(n, p, []string{LabelKind + "s", AnnotationKind + "s"}, func(k, fp string, v *yaml.Node) {
		set.Kind = strings.TrimSuffix(k, "s")
		var reads bool
		set.CEL, reads, ok = d.cel(v, fp, celexpr.StringMapType, "key set")
		if reads {
			d.Errorf(v, fp, "%s: a copy follows its source, and the controller never knows the request; "+
				"request may be read only in a recorded value (once: true)", celexpr.Request)
			ok = false
		}
	})
	return set, ok
}

// keyGlobs decodes a non-empty list of globs of keys, found at path p.
func (d *decoder) keyGlobs(n *yaml.Node, p string) []string {
	return d.List(n, p, "globs of keys", "must name at least one key or glob; \"*\" copies every key", func(item *yaml.Node, ip, s string) bool {
		if err := glob.Check(s); s == "" || err != nil {
			d.Errorf(item, ip, "invalid glob %q: want a key, or a glob of keys such as example.com/* or team-?", s)
			return false
		}
		return true
	})
}

// copySchema is the JSON Schema of a rule's copy.
func copySchema() *jsonSchema {
	globs := &jsonSchema{Type: "array", MinItems: 1, UniqueItems: true, Items: &jsonSchema{Type: "string", MinLength: 1}}
	item := &jsonSchema{Type: "object", MinProperties: 1, AdditionalProperties: closed, Properties: map[string]*jsonSchema{}}
	for _, src := range copyFrom {
		from := &jsonSchema{Type: "object", AdditionalProperties: closed, Properties: map[string]*jsonSchema{
			LabelKind + "s":      globs,
			AnnotationKind + "s": globs,
			exceptField:          globs,
			onceField: {Type: "boolean",
				Description: "true records the keys copied: each is written where the object lacks it, then kept as it was, whatever the source becomes."},
		}, OneOf: []*jsonSchema{{Required: []string{LabelKind + "s"}}, {Required: []string{AnnotationKind + "s"}}},
			Description: "The keys of " + src.What + " to copy: labels or annotations, as globs (* matches '/' too), and the keys except."}
		if src.IsOwner {
			owner := ownerSchema()
			from.Properties[ownerField], from.Properties[throughField] = owner.Properties[ownerField], owner.Properties[throughField]
		}
		if src == source.Ref {
			r := refSchema()
			for _, f := range refFields {
				from.Properties[f] = r.Properties[f]
			}
			from.Required = []string{refResourceField}
			from.AllOf = []*jsonSchema{{OneOf: []*jsonSchema{{Required: []string{refFieldField}}, {Required: []string{refNameField}}}}}
		}
		item.Properties[src.Field] = from
		item.OneOf = append(item.OneOf, &jsonSchema{Required: []string{src.Field}})
	}
	expr := &jsonSchema{Type: "string", MinLength: 1}
	item.Properties[spec.CELField] = &jsonSchema{Type: "object", AdditionalProperties: closed, MinProperties: 1,
		Properties: map[string]*jsonSchema{LabelKind + "s": expr, AnnotationKind + "s": expr},
		OneOf:      []*jsonSchema{{Required: []string{LabelKind + "s"}}, {Required: []string{AnnotationKind + "s"}}},
		Description: "Keys and values computed from the object: a CEL expression yielding a map of strings, " +
			"e.g. one annotation per container with transformMapEntry."}
	item.OneOf = append(item.OneOf, &jsonSchema{Required: []string{spec.CELField}})
	return &jsonSchema{Type: "array", MinItems: 1, Items: item}
}
