package value

import (
	"maps"
	"slices"
	"strconv"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Read is one key, or glob of keys, that a rule writes from a key of
// another object: the field that says so, what it writes and what it
// reads, and of which resource.
type Read struct {
	// Field is the rule's field that reads, as errors name it:
	// "labels.team.fromRef", "copy".
	Field string
	// Kind and Key are what is written (Key may be a glob, of a copy).
	Kind, Key string
	// From is the resource read; FromKind and FromKey the key read.
	From              *source.Source
	FromKind, FromKey string
}

// Reads returns what the keys of m, of kind, read of other objects: a
// read for each source a value or a copy may read (each owner resource
// walked through, each object a fromRef may name), in the order of the
// keys, then of the copies.
func (r Readers) Reads(m *spec.Metadata, kind string) []Read {
	var out []Read
	for _, key := range slices.Sorted(maps.Keys(m.FromNamespace)) {
		k := m.FromNamespace[key]
		out = append(out, Read{Field: kind + "s." + key + "." + source.Namespace.Field, Kind: kind, Key: key,
			From: source.Namespace, FromKind: k.Kind, FromKey: k.Key})
	}
	for _, key := range slices.Sorted(maps.Keys(m.FromRelated)) {
		k := m.FromRelated[key]
		for _, src := range r.sourcesOf(k.Source, k.Owners, k.Refs) {
			out = append(out, Read{Field: kind + "s." + key + "." + k.Source.Field, Kind: kind, Key: key, From: src, FromKind: k.Kind, FromKey: k.Key})
		}
	}
	for i, set := range m.Copy {
		if set.Source == nil {
			continue // computed from the object itself
		}
		for _, src := range r.sourcesOf(set.Source, set.Owners, set.Refs) {
			for _, g := range set.Keys {
				out = append(out, Read{Field: "copy[" + strconv.Itoa(i) + "]." + set.Source.Field, Kind: kind, Key: g, From: src, FromKind: set.Kind, FromKey: g})
			}
		}
	}
	return out
}

// sourcesOf returns the sources a read of src may find its object in.
func (r Readers) sourcesOf(src *source.Source, owners *spec.Owners, refs *spec.Refs) []*source.Source {
	switch {
	case owners != nil:
		if w := r.Owners[owners]; w != nil {
			return w.Through
		}
		return nil
	case refs != nil:
		if ref := r.Refs[refs]; ref != nil {
			return ref.Sources
		}
		return nil
	}
	return []*source.Source{src}
}
