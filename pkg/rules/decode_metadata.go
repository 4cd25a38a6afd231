package rules

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// metadata decodes an annotations or labels mapping: keys to literal string
// values, or to {jsonPath: '…'} values read from the object.
func (d *decoder) metadata(n *yaml.Node, path, kind string) (literal, from map[string]string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "must be a mapping of %s keys to string values, got %s", kind, describe(n))
		return nil, nil
	}
	if len(n.Content) == 0 {
		d.errorf(n, path, "must set at least one %s", kind)
		return nil, nil
	}
	size := 0
	d.fields(n, path, nil, func(key, p string, v *yaml.Node) {
		d.metadataKey(d.keyLine, p, kind, key)
		if v.Kind == yaml.MappingNode && !hasKey(v, "jsonPath") {
			d.errorf(v, p, "value must be a string, or {jsonPath: '{.path.to.field}'} to read it from the object; got a mapping")
			return
		}
		if v.Kind == yaml.MappingNode {
			if tmpl, ok := d.jsonPathValue(v, p); ok {
				if from == nil {
					from = map[string]string{}
				}
				from[key] = tmpl
			}
			return
		}
		s, ok := d.value(v, p)
		if !ok {
			return
		}
		if kind == labelKind {
			for _, msg := range validation.IsValidLabelValue(s) {
				d.errorf(v, p, "invalid label value %q: %s", s, msg)
			}
		}
		if literal == nil {
			literal = map[string]string{}
		}
		literal[key] = s
		size += len(key) + len(s)
	})
	if kind == annotationKind && size > apivalidation.TotalAnnotationSizeLimitB {
		d.errorf(n, path, "annotations total %d bytes, more than the API server accepts (%d)", size, apivalidation.TotalAnnotationSizeLimitB)
	}
	return literal, from
}

// metadataKey reports an invalid annotation or label key. Annotation keys
// are checked lowercased, as the API server does.
func (d *decoder) metadataKey(line int, path, kind, key string) {
	check := key
	if kind == annotationKind {
		check = strings.ToLower(key)
	}
	for _, msg := range validation.IsQualifiedName(check) {
		d.errs = append(d.errs, FieldError{Line: line, Field: path, Message: fmt.Sprintf("invalid %s key: %s", kind, msg)})
	}
	if kind == annotationKind && patch.IsMarker(check) {
		d.errs = append(d.errs, FieldError{Line: line, Field: path, Message: fmt.Sprintf(
			"reserved annotation key: kube-annotator's admission policies record in *.%s/* annotations the keys they set", patch.MarkerDomain)})
	}
}

// keys decodes a list of annotation or label keys to remove.
func (d *decoder) keys(n *yaml.Node, path, kind string) []string {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "must be a list of %s keys, got %s", kind, describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		d.errorf(n, path, "must name at least one %s key", kind)
		return nil
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		if d.exhausted() {
			break
		}
		p := fmt.Sprintf("%s[%d]", path, i)
		s, ok := d.str(deref(item), p)
		if !ok {
			continue
		}
		if seen[s] {
			d.errorf(item, p, "duplicate key %q", s)
			continue
		}
		seen[s] = true
		d.metadataKey(item.Line, p, kind, s)
		out = append(out, s)
	}
	return out
}

// hasKey reports whether mapping n has key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if deref(n.Content[i]).Value == key {
			return true
		}
	}
	return false
}
