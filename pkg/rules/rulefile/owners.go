package rulefile

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// ownerFields are the fields of a fromOwner value form besides the key.
const (
	ownerField   = "owner"
	throughField = "through"
)

// fromOwner decodes {label: KEY} or {annotation: KEY} with an optional
// owner: RESOURCE and through: [RESOURCE, …], the value of a fromOwner
// value form found at path p.
func (d *decoder) fromOwner(n *yaml.Node, p string) (RelatedKey, bool) {
	d.LineOf(p, n)
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, p, "must be {label: KEY} or {annotation: KEY}, with owner: RESOURCE or through: [RESOURCE, …] if need be, got %s", yamlfield.Describe(n))
		return RelatedKey{}, false
	}
	before := len(d.Errs)
	owners := &Owners{}
	key := &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Column: n.Column}
	d.Fields(n, p, []string{LabelKind, AnnotationKind, ownerField, throughField}, func(k, fp string, v *yaml.Node) {
		switch k {
		case ownerField:
			owners.Hop = d.ownerResource(v, fp)
		case throughField:
			owners.Through = d.ownerResources(v, fp)
		default:
			key.Content = append(key.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: v.Line, Column: v.Column}, v)
		}
	})
	kind, k, ok := d.objectKey(key, p, source.Owner.What)
	owners.Complete()
	return RelatedKey{Source: source.Owner, Kind: kind, Key: k, Owners: owners}, ok && len(d.Errs) == before
}

// ownerWalk decodes a rule's ownerObject, {owner: RESOURCE} and
// through: [RESOURCE, …], found at path p.
func (d *decoder) ownerWalk(n *yaml.Node, p string) *Owners {
	d.LineOf(p, n)
	d.ownerObject = n
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, p, "must be a mapping with owner: RESOURCE or through: [RESOURCE, …], got %s", yamlfield.Describe(n))
		return nil
	}
	o := &Owners{}
	d.Fields(n, p, []string{ownerField, throughField}, func(k, fp string, v *yaml.Node) {
		if k == ownerField {
			o.Hop = d.ownerResource(v, fp)
		} else {
			o.Through = d.ownerResources(v, fp)
		}
	})
	o.Complete()
	return o
}

// ownerObjectFor completes r's ownerObject, at path: the default walk
// when an expression reads ownerObject and r names none; an error when
// r names one and no expression reads it.
func (d *decoder) ownerObjectFor(path string, r *Rule) {
	switch {
	case d.readsOwner != nil && r.OwnerObject == nil && d.ownerObject == nil:
		r.OwnerObject = &Owners{}
		r.OwnerObject.Complete()
	case d.readsOwner == nil && d.ownerObject != nil:
		d.Errorf(d.ownerObject, FieldPath(path, "ownerObject"), "no CEL expression of the rule reads %s: remove the field, "+
			"or read the owner in when or a cel value (%s.metadata.labels.team)", celexpr.OwnerObject, celexpr.OwnerObject)
	}
}

// ownerResource decodes the name of an owner resource, found at path p.
func (d *decoder) ownerResource(v *yaml.Node, p string) string {
	s, ok := d.Str(v, p)
	if !ok {
		return ""
	}
	if s == "" || strings.ContainsAny(s, " \t\n/,") { // resourcePattern
		d.Errorf(v, p, "invalid resource %q: name one owner resource as kubectl does, e.g. deployments.apps or rollouts.argoproj.io", s)
		return ""
	}
	return s
}

// ownerResources decodes a list of owner resources, found at path p.
func (d *decoder) ownerResources(v *yaml.Node, p string) []string {
	return d.UniqueList(v, p, "owner resources", "must name at least one owner resource to walk through", "resource", func(item *yaml.Node, ip, s string) bool {
		return d.ownerResource(item, ip) != ""
	})
}

// ownerForm is the value form that reads a label or annotation of an
// object's controller owner.
var ownerForm = valueForm{name: source.Owner.Field,
	how: "{fromOwner: {label: KEY}} to read a label (or annotation) of its controller owner",
	doc: "The value of a label or annotation of the object's controller owner (ownerReferences, controller: true, " +
		"matched by UID), walked through the owner resources in through (by default " + strings.Join(source.DefaultOwners, ", ") +
		"): the root of that chain, or the first object of the resource owner names. It follows the owner when that changes.",
	computed: true,
	value:    func(string) *jsonSchema { return ref(source.Owner.Field) },
	decode: func(d *decoder, v *yaml.Node, p, key string, into *metadataValues) {
		if k, ok := d.fromOwner(v, p); ok {
			into.FromRelated = spec.Put(into.FromRelated, key, k)
		}
	}}

// ownerWalkSchema is the JSON Schema of a rule's ownerObject.
func ownerWalkSchema() *jsonSchema {
	s := ownerSchema()
	s.Required, s.OneOf, s.MinProperties, s.Description = nil, nil, 0, ""
	for _, k := range []string{LabelKind, AnnotationKind} {
		delete(s.Properties, k)
	}
	return s
}

// ownerSchema is the JSON Schema of a fromOwner value form.
func ownerSchema() *jsonSchema {
	s := objectKeySchema(source.Owner.What)
	names := &jsonSchema{Type: "string", MinLength: 1, Pattern: resourcePattern}
	s.Properties[ownerField] = &jsonSchema{Description: "The owner resource whose object is read: the first one of it in the chain (default: the root).", Type: "string", MinLength: 1, Pattern: resourcePattern}
	s.Properties[throughField] = &jsonSchema{Description: fmt.Sprintf("The owner resources walked through (default: %s).", strings.Join(source.DefaultOwners, ", ")),
		Type: "array", MinItems: 1, UniqueItems: true, Items: names}
	return s
}
