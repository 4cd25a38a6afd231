package rulefile

import (
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"

	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"
)

// mode decodes a rule's mode.
func (d *decoder) mode(n *yaml.Node, p string) string {
	s, ok := d.Str(n, p)
	if !ok {
		return ""
	}
	if !slices.Contains(spec.Modes, s) {
		d.Errorf(n, p, "unknown mode %q%s; a mode is %s", s, yamlfield.Suggest(s, spec.Modes), strings.Join(spec.Modes, " or "))
		return ""
	}
	return s
}
