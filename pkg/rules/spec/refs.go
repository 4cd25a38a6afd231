package spec

import (
	"maps"
	"slices"
)

// DataKind is the kind of key {fromRef: …} reads of a ConfigMap's data.
const DataKind = "data"

// Refs says which object a {fromRef: …} key reads: the object named by a
// field of the object, or one named literally, in the object's namespace.
type Refs struct {
	// Resource is the resource of the object read, as written.
	Resource string
	// Field is the path of the field that names the object: a name, or
	// an object reference (kind, namespace, name, uid). Nil when Name
	// gives the object.
	Field []string
	// Name is the name of the object read, in the object's namespace,
	// when no Field names it.
	Name string
	// Names are the names Field may give, with Field: the only objects of
	// Resource cached. A resource that is source.RefResource.Bounded
	// needs them.
	Names []string
}

// RefKeys returns r's fromRef keys, annotations then labels, each by key,
// then its key sets copied from an object referred to (Key ""): what the
// controller lists and watches for them, and what rbac grants.
func (r *Rule) RefKeys() []RelatedKey {
	var out []RelatedKey
	for _, l := range r.Levels() {
		for _, k := range slices.Sorted(maps.Keys(l.FromRelated)) {
			if l.FromRelated[k].Refs != nil {
				out = append(out, l.FromRelated[k])
			}
		}
	}
	for _, m := range []*Metadata{&r.Annotations, &r.Labels} {
		for _, set := range m.Copy {
			if set.Refs != nil {
				out = append(out, RelatedKey{Source: set.Source, Kind: set.Kind, Refs: set.Refs})
			}
		}
	}
	return out
}

// RefResources returns the resources, as written, that r's fromRef keys
// read, sorted.
func (r *Rule) RefResources() []string {
	var out []string
	for _, k := range r.RefKeys() {
		if !slices.Contains(out, k.Refs.Resource) {
			out = append(out, k.Refs.Resource)
		}
	}
	slices.Sort(out)
	return out
}
