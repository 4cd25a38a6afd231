package rulefile

import (
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// The fields of a fromRef value form besides the key.
const (
	refResourceField = "resource"
	refFieldField    = "field"
	refNameField     = "name"
	refNamesField    = "names"
)

// dnsSubdomainPattern is validation.IsDNS1123Subdomain's format.
const dnsSubdomainPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`

// refFieldPattern is a field path as fromRef's field takes it:
// spec.claimRef, dot-separated names.
var refFieldPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// refResourceNames says which resources fromRef reads, in errors.
func refResourceNames() string {
	var out []string
	for _, r := range source.RefResources {
		out = append(out, r.Resource)
	}
	return strings.Join(out, " or ")
}

// fromRef decodes the value of a fromRef value form found at path p:
// resource: RESOURCE, field: PATH or name: NAME, names: [NAME, …] if need
// be, and one key: label, annotation or, of a ConfigMap, data.
func (d *decoder) fromRef(n *yaml.Node, p string) (RelatedKey, bool) {
	d.LineOf(p, n)
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, p, "must be {resource: RESOURCE, field: PATH, label: KEY}, or name: NAME in place of field, got %s", yamlfield.Describe(n))
		return RelatedKey{}, false
	}
	before := len(d.Errs)
	refs := &Refs{}
	var res source.RefResource
	var kinds []string
	var key string
	seen := d.Fields(n, p, slices.Concat(refFields, []string{LabelKind, AnnotationKind, DataKind}), func(k, fp string, v *yaml.Node) {
		if d.refField(k, fp, v, refs, &res) {
			return
		}
		s, isStr := d.Str(v, fp)
		if !isStr {
			return
		}
		kinds = append(kinds, k)
		key = s
		if k == DataKind {
			for _, msg := range validation.IsConfigMapKey(s) {
				d.Errorf(v, fp, "invalid data key: %s", msg)
			}
		} else {
			d.metadataKey(v.Line, fp, k, s)
		}
	})
	d.refShape(n, p, refs, res, seen, kinds)
	var kind string
	if len(kinds) == 1 {
		kind = kinds[0]
	}
	return RelatedKey{Source: source.Ref, Kind: kind, Key: key, Refs: refs}, len(d.Errs) == before
}

// refFields are the fields that say which object a fromRef, or a copy
// from one, reads.
var refFields = []string{refResourceField, refFieldField, refNameField, refNamesField}

// refField decodes v, the field k of refFields found at path p, into refs
// (and res, the resource), and reports whether k is one of them.
func (d *decoder) refField(k, p string, v *yaml.Node, refs *Refs, res *source.RefResource) bool {
	if k == refNamesField {
		refs.Names = d.refNames(v, p)
		return true
	}
	if !slices.Contains(refFields, k) {
		return false
	}
	s, ok := d.Str(v, p)
	if !ok {
		return true
	}
	switch k {
	case refResourceField:
		*res = d.refResource(v, p, s)
		refs.Resource = s
		if res.Resource != "" {
			refs.Resource = res.GroupResource.String() // configmaps.v1 is read as configmaps, which discovery resolves
		}
	case refFieldField:
		if !refFieldPattern.MatchString(s) {
			d.Errorf(v, p, "invalid field %q: give the path of a field of the object, dot-separated, such as spec.claimRef", s)
			return true
		}
		refs.Field = strings.Split(s, ".")
	case refNameField:
		if d.refName(v, p, s) {
			refs.Name = s
		}
	}
	return true
}

// refShape reports what the fields of a fromRef at path p, seen, lack or
// give too many of.
func (d *decoder) refShape(n *yaml.Node, p string, refs *Refs, res source.RefResource, seen map[string]bool, kinds []string) {
	switch {
	case !seen[refResourceField]:
		d.Errorf(n, p, "must name the resource of the object read: resource: %s", refResourceNames())
	case seen[refFieldField] == seen[refNameField]:
		d.Errorf(n, p, "must give either field: PATH, the field of the object that names the object read, or name: NAME, its name in the object's namespace")
	case seen[refNamesField] && !seen[refFieldField]:
		d.Errorf(n, p, "names bound the names a field gives; with name: the one name is known")
	case res.Bounded && seen[refFieldField] && !seen[refNamesField]:
		d.Errorf(n, p, "must give names: [NAME, …], the names of the %s the field may name: only %s of those names are cached, never every one",
			res.Resource, res.Resource)
	}
	switch {
	case len(kinds) == 0:
		d.Errorf(n, p, "must name the key to read: label: KEY or annotation: KEY, or, of a ConfigMap, data: KEY")
	case len(kinds) > 1:
		d.Errorf(n, p, "gives %s; read one key of the object referred to", strings.Join(kinds, " and "))
	case kinds[0] == DataKind && !res.Data && res.Resource != "":
		d.Errorf(n, p, "reads data of %s, which have none: read a label or an annotation", res.Resource)
	}
}

// refResource decodes the resource of a fromRef found at path p.
func (d *decoder) refResource(v *yaml.Node, p, s string) source.RefResource {
	if why := source.RefusedRef(s); why != "" {
		d.Errorf(v, p, "fromRef does not read %q: %s", s, why)
		return source.RefResource{}
	}
	res, ok := source.RefResourceNamed(s)
	if !ok {
		d.Errorf(v, p, "fromRef reads %s; %q is not one of them", refResourceNames(), s)
	}
	return res
}

// refName checks the name of an object read, found at path p.
func (d *decoder) refName(v *yaml.Node, p, s string) bool {
	for _, msg := range validation.IsDNS1123Subdomain(s) {
		d.Errorf(v, p, "invalid name %q: %s", s, msg)
		return false
	}
	return true
}

// refNames decodes the names a fromRef's field may give, found at path p.
func (d *decoder) refNames(v *yaml.Node, p string) []string {
	return d.UniqueList(v, p, "names", "must give at least one name", "name", func(item *yaml.Node, ip, s string) bool {
		return d.refName(item, ip, s)
	})
}

// refForm is the value form that reads a key of an object the object
// refers to.
var refForm = valueForm{name: source.Ref.Field,
	how: "{fromRef: {resource: RESOURCE, field: PATH, label: KEY}} to read a label (or annotation) of an object it refers to",
	doc: "The value of a label or annotation (or a ConfigMap's data key) of an object the object refers to: the one named by the field " +
		"(a name, or an object reference whose UID, when given, must match), or the one named name, in the object's namespace. " +
		"A namespaced object refers only within its namespace. It follows the object referred to when that changes.",
	computed: true,
	value:    func(string) *jsonSchema { return ref(source.Ref.Field) },
	decode: func(d *decoder, v *yaml.Node, p, key string, into *metadataValues) {
		if k, ok := d.fromRef(v, p); ok {
			into.FromRelated = spec.Put(into.FromRelated, key, k)
		}
	}}

// refSchema is the JSON Schema of a fromRef value form.
func refSchema() *jsonSchema {
	var resources []string
	for _, r := range source.RefResources {
		resources = append(resources, r.Names...)
	}
	name := &jsonSchema{Type: "string", MinLength: 1, MaxLength: validation.DNS1123SubdomainMaxLength, Pattern: dnsSubdomainPattern}
	s := &jsonSchema{Type: "object", AdditionalProperties: closed, Required: []string{refResourceField},
		Description: "An object the object refers to, and the key of it to read.",
		Properties: map[string]*jsonSchema{
			refResourceField: {Description: "The resource of the object read (Secrets are never read).", Type: "string", Enum: resources},
			refFieldField:    {Description: "The field of the object that names the object read: a name, or an object reference (namespace, name, uid).", Type: "string", Pattern: refFieldPattern.String()},
			refNameField:     {Description: "The name of the object read, in the object's namespace.", Type: "string", MinLength: 1, MaxLength: validation.DNS1123SubdomainMaxLength, Pattern: dnsSubdomainPattern},
			refNamesField:    {Description: "With field: the names it may give, the only objects cached (required for configmaps).", Type: "array", MinItems: 1, UniqueItems: true, Items: name},
			LabelKind:        ref(keyDef(LabelKind)),
			AnnotationKind:   ref(keyDef(AnnotationKind)),
			DataKind: {Description: "A data key of the ConfigMap read.", Type: "string", MinLength: 1, MaxLength: validation.DNS1123SubdomainMaxLength,
				Pattern: `^[-._a-zA-Z0-9]+$`, Not: &jsonSchema{Pattern: `^(\.|\.\..*)$`}},
		},
		AllOf: []*jsonSchema{
			{OneOf: []*jsonSchema{{Required: []string{refFieldField}}, {Required: []string{refNameField}}}},
			{OneOf: []*jsonSchema{{Required: []string{LabelKind}}, {Required: []string{AnnotationKind}}, {Required: []string{DataKind}}}},
		}}
	return s
}
