package rulefile

import (
	"github.com/google/cel-go/common/types"
	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
)

// when decodes a rule's when condition: a CEL expression yielding a bool.
func (d *decoder) when(v *yaml.Node, p string) string {
	src, ok := d.cel(v, p, types.BoolType, "condition")
	if !ok {
		return ""
	}
	return src
}

// celValue decodes the expression of {cel: "…"}: a CEL expression
// yielding a string.
func (d *decoder) celValue(v *yaml.Node, p string) (string, bool) {
	return d.cel(v, p, types.StringType, "value")
}

// cel decodes a CEL expression found at p that must yield want, and
// reports at v's line why it does not compile, or what it reads that
// every write changes.
func (d *decoder) cel(v *yaml.Node, p string, want *types.Type, what string) (string, bool) {
	d.LineOf(p, v)
	src, ok := d.Str(v, p)
	if !ok {
		return "", false
	}
	if src == "" {
		d.Errorf(v, p, "must be a CEL expression, got an empty string")
		return "", false
	}
	e, err := celexpr.Compile(src, want)
	if err != nil {
		d.Errorf(v, p, "invalid CEL %s %q: %v", what, src, err)
		return "", false
	}
	if why := e.Volatile(); why != "" {
		d.Errorf(v, p, "CEL %s %q reads %s, which every write changes, so it would never settle; "+
			"read fields by name, e.g. object.metadata.labels.team", what, src, why)
		return "", false
	}
	return src, true
}
