package rulefile

import (
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Modes of a rule.
const (
	// ModeEnforce writes what the rule wants; a rule without a mode enforces.
	ModeEnforce = "enforce"
	// ModeAudit reports what the rule would change and never writes for it.
	ModeAudit = "audit"
)

// modes are the values the "mode" field accepts.
var modes = []string{ModeEnforce, ModeAudit}

// mode decodes a rule's mode.
func (d *decoder) mode(n *yaml.Node, p string) string {
	s, ok := d.str(n, p)
	if !ok {
		return ""
	}
	if !slices.Contains(modes, s) {
		d.errorf(n, p, "unknown mode %q%s; a mode is %s", s, suggest(s, modes), strings.Join(modes, " or "))
		return ""
	}
	return s
}

// Audit reports whether the rule only reports what it would change.
func (r *Rule) Audit() bool { return r.Mode == ModeAudit }

// EffectiveMode is the rule's mode, ModeEnforce when the file gives none.
func (r *Rule) EffectiveMode() string {
	if r.Mode == "" {
		return ModeEnforce
	}
	return r.Mode
}
