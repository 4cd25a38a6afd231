package rulefile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// NamespaceKey is a label or annotation of a namespace that a rule reads a
// value from: {fromNamespace: {label: team}} or {fromNamespace:
// {annotation: example.com/cost-center}}.
type NamespaceKey struct {
	// Kind is "label" or "annotation".
	Kind string
	// Key is the label or annotation key.
	Key string
}

// String formats k as in the rules file: `label "team"`.
func (k NamespaceKey) String() string { return fmt.Sprintf("%s %q", k.Kind, k.Key) }

// namespaceKeyKinds are the fields of a fromNamespace value form: the
// kinds of namespace key it may read.
var namespaceKeyKinds = []string{LabelKind, AnnotationKind}

// fromNamespace decodes {label: KEY} or {annotation: KEY}, the value of a
// fromNamespace value form.
func (d *decoder) fromNamespace(n *yaml.Node, p string) (NamespaceKey, bool) {
	kind, key, ok := d.objectKey(n, p, "the namespace")
	return NamespaceKey{Kind: kind, Key: key}, ok
}

// objectKey decodes {label: KEY} or {annotation: KEY}, found at path p:
// one key of another object, named in errors by of ("the namespace").
func (d *decoder) objectKey(n *yaml.Node, p, of string) (kind, key string, ok bool) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, p, "must be {label: KEY} or {annotation: KEY}, got %s", describe(n))
		return "", "", false
	}
	seen := d.fields(n, p, namespaceKeyKinds, func(k, fp string, v *yaml.Node) {
		s, isStr := d.str(v, fp)
		if !isStr {
			return
		}
		before := len(d.errs)
		d.metadataKey(v.Line, fp, k, s)
		kind, key, ok = k, s, len(d.errs) == before
	})
	switch {
	case seen[LabelKind] && seen[AnnotationKind]:
		d.errorf(n, p, "gives both label and annotation; read one key of %s", of)
		return "", "", false
	case !seen[LabelKind] && !seen[AnnotationKind]:
		d.errorf(n, p, "must name %s key to read: {label: KEY} or {annotation: KEY}", possessive(of))
		return "", "", false
	}
	return kind, key, ok
}

// possessive is "the namespace's" for "the namespace".
func possessive(of string) string {
	if strings.HasSuffix(of, "s") {
		return of + "'"
	}
	return of + "'s"
}

// RelatedKey is a label or annotation of a related object that a rule
// reads a value from: {fromNode: {label: KEY}}.
type RelatedKey struct {
	// Source is the source read: source.Node for {fromNode: …}. A test
	// may give one of its own, which works as the shipped ones do.
	Source *source.Source
	// Kind is "label" or "annotation"; Key is the key.
	Kind, Key string
	// Owners says which owner is read, for source.Owner ({fromOwner:
	// …}); nil for any other source.
	Owners *Owners
	// Refs says which object is read, for source.Ref ({fromRef: …});
	// nil for any other source. Kind may then be DataKind too.
	Refs *Refs
}

// String formats k as in messages: `label "zone"`.
func (k RelatedKey) String() string { return fmt.Sprintf("%s %q", k.Kind, k.Key) }

// relatedKey decodes {label: KEY} or {annotation: KEY}, the value of the
// value form of src, found at path p.
func (d *decoder) relatedKey(n *yaml.Node, p string, src *source.Source) (RelatedKey, bool) {
	d.lineOf(p, n)
	kind, key, ok := d.objectKey(n, p, src.What)
	return RelatedKey{Source: src, Kind: kind, Key: key}, ok
}

// relatedFor reports, for rule r at path, each value or key set read
// from a related object by a rule that names a resource other than the
// one whose objects name it: only a Pod has a Node.
func (d *decoder) relatedFor(n *yaml.Node, path string, r *Rule) {
	var reads []struct {
		path string
		src  *source.Source
	}
	for _, kind := range []string{AnnotationKind, LabelKind} {
		from := r.Of(kind).FromRelated
		for _, key := range slices.Sorted(maps.Keys(from)) {
			reads = append(reads, struct {
				path string
				src  *source.Source
			}{FieldPath(FieldPath(path+"."+kind+"s", key), from[key].Source.Field), from[key].Source})
		}
	}
	for i, item := range copyNodes(n) {
		for j := 0; j+1 < len(item.Content); j += 2 {
			if src := source.ByField(deref(item.Content[j]).Value); src != nil {
				reads = append(reads, struct {
					path string
					src  *source.Source
				}{fmt.Sprintf("%s.copy[%d].%s", path, i, src.Field), src})
			}
		}
	}
	for _, read := range reads {
		src := read.src
		if src.For.Empty() {
			continue
		}
		for j, name := range r.Resources {
			if slices.Contains(src.Names, strings.ToLower(name)) {
				continue
			}
			d.errs = append(d.errs, FieldError{Line: cmp.Or(d.lines[read.path], n.Line), Field: read.path, Message: fmt.Sprintf(
				"reads %s, but the rule also names %q (resources[%d]): only %s have one; give this key in a rule of its own for %s",
				src.What, name, j, src.For.String(), src.For.String())})
		}
	}
}

// copyNodes returns the items of the copy of rule mapping n, if any.
func copyNodes(n *yaml.Node) []*yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if deref(n.Content[i]).Value == "copy" {
			var out []*yaml.Node
			for _, item := range deref(n.Content[i+1]).Content {
				out = append(out, deref(item))
			}
			return out
		}
	}
	return nil
}

// Joined returns the keys of a and b, which share none; a when b is empty.
func Joined(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := maps.Clone(b)
	maps.Copy(out, a)
	return out
}

// IgnoreAnnotation opts an object, or every object of a namespace, out of
// the rules when its value is "true": nothing is set, changed or deleted
// on such objects, whatever the rules say.
const IgnoreAnnotation = "kube-annotator.io/ignore"

// RelatedSources returns the sources besides the namespace that r reads
// values from (each source of its RelatedKeys and key sets), in
// source.Order.
func (r *Rule) RelatedSources() []*source.Source {
	var out []*source.Source
	add := func(src *source.Source) {
		if src != source.Namespace && !slices.Contains(out, src) {
			out = append(out, src)
		}
	}
	for _, m := range []*Metadata{&r.Annotations, &r.Labels} {
		for _, k := range m.FromRelated {
			add(k.Source)
		}
		for _, set := range m.Copy {
			add(set.Source)
		}
	}
	slices.SortFunc(out, source.Order)
	return out
}

// owners returns how each of r's fromOwner keys and key sets walks the
// owners.
func (r *Rule) owners() []*Owners {
	var out []*Owners
	for _, m := range []*Metadata{&r.Annotations, &r.Labels} {
		for _, k := range m.FromRelated {
			if k.Owners != nil {
				out = append(out, k.Owners)
			}
		}
		for _, set := range m.Copy {
			if set.Owners != nil {
				out = append(out, set.Owners)
			}
		}
	}
	return out
}
