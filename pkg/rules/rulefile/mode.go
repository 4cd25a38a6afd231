package rulefile

import (
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"

	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// mode decodes a rule's mode.
func (d *decoder) mode(n *yaml.Node, p string) string {
	s, ok := d.str(n, p)
	if !ok {
		return ""
	}
	if !slices.Contains(spec.Modes, s) {
		d.errorf(n, p, "unknown mode %q%s; a mode is %s", s, suggest(s, spec.Modes), strings.Join(spec.Modes, " or "))
		return ""
	}
	return s
}
