package rulefile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

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
		d.Errorf(n, p, "must be {label: KEY} or {annotation: KEY}, got %s", yamlfield.Describe(n))
		return "", "", false
	}
	seen := d.Fields(n, p, namespaceKeyKinds, func(k, fp string, v *yaml.Node) {
		s, isStr := d.Str(v, fp)
		if !isStr {
			return
		}
		before := len(d.Errs)
		d.metadataKey(v.Line, fp, k, s)
		kind, key, ok = k, s, len(d.Errs) == before
	})
	switch {
	case seen[LabelKind] && seen[AnnotationKind]:
		d.Errorf(n, p, "gives both label and annotation; read one key of %s", of)
		return "", "", false
	case !seen[LabelKind] && !seen[AnnotationKind]:
		d.Errorf(n, p, "must name %s key to read: {label: KEY} or {annotation: KEY}", possessive(of))
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

// relatedKey decodes {label: KEY} or {annotation: KEY}, the value of the
// value form of src, found at path p.
func (d *decoder) relatedKey(n *yaml.Node, p string, src *source.Source) (RelatedKey, bool) {
	d.LineOf(p, n)
	kind, key, ok := d.objectKey(n, p, src.What)
	return RelatedKey{Source: src, Kind: kind, Key: key}, ok
}

// relatedFor reports, for rule r at path, each value or key set read
// from a related object by a rule that names a resource other than the
// one whose objects name it: only a Pod has a Node.
func (d *decoder) relatedFor(n *yaml.Node, path string, r *Rule) {
	type read struct {
		path string
		src  *source.Source
	}
	var reads []read
	for _, kind := range []string{AnnotationKind, LabelKind} {
		from := r.Of(kind).FromRelated
		for _, key := range slices.Sorted(maps.Keys(from)) {
			reads = append(reads, read{FieldPath(FieldPath(path+"."+kind+"s", key), from[key].Source.Field), from[key].Source})
		}
	}
	for i, item := range copyNodes(n) {
		for j := 0; j+1 < len(item.Content); j += 2 {
			if src := source.ByField(yamlfield.Deref(item.Content[j]).Value); src != nil {
				reads = append(reads, read{fmt.Sprintf("%s.copy[%d].%s", path, i, src.Field), src})
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
			d.Errs = append(d.Errs, FieldError{Line: cmp.Or(d.Lines[read.path], n.Line), Field: read.path, Message: fmt.Sprintf(
				"reads %s, but the rule also names %q (resources[%d]): only %s have one; give this key in a rule of its own for %s",
				src.What, name, j, src.For.String(), src.For.String())})
		}
	}
}

// copyNodes returns the items of the copy of rule mapping n, if any.
func copyNodes(n *yaml.Node) []*yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if yamlfield.Deref(n.Content[i]).Value == "copy" {
			var out []*yaml.Node
			for _, item := range yamlfield.Deref(n.Content[i+1]).Content {
				out = append(out, yamlfield.Deref(item))
			}
			return out
		}
	}
	return nil
}
