package spec

import ()

// Modes of a rule.
const (
	// ModeEnforce writes what the rule wants; a rule without a mode enforces.
	ModeEnforce = "enforce"
	// ModeAudit reports what the rule would change and never writes for it.
	ModeAudit = "audit"
)

// Modes are the values the "mode" field accepts.
var Modes = []string{ModeEnforce, ModeAudit}

// Audit reports whether the rule only reports what it would change.
func (r *Rule) Audit() bool { return r.Mode == ModeAudit }

// EffectiveMode is the rule's mode, ModeEnforce when the file gives none.
func (r *Rule) EffectiveMode() string {
	if r.Mode == "" {
		return ModeEnforce
	}
	return r.Mode
}
