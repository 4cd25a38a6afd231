package tenants

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// ConfirmAnnotation is the annotation of a tenant's ConfigMap that
// confirms a file held by the tenants section's maxChanges: its value is
// the file's Digest, which the status gives.
const ConfirmAnnotation = "kube-annotator.io/confirm-rules"

// Digest names a file's content for ConfirmAnnotation: the first 12 hex
// digits of its SHA-256.
func Digest(f File) string {
	sum := sha256.Sum256(f.Data)
	return hex.EncodeToString(sum[:])[:12]
}

// Confirmed reports whether the tenant confirmed f as it is now.
func (f File) Confirmed() bool { return f.Confirm == Digest(f) }

// Held says why a tenant's file is not in force: it would change more
// objects than the tenants section's maxChanges allows, unconfirmed.
type Held struct {
	// Changes is how many objects of the tenant's namespace the file's
	// rules would change; Limit is maxChanges.
	Changes, Limit int
	// Rules is how many rules the file would put in force; Digest is
	// what ConfirmAnnotation must say to confirm it.
	Rules  int
	Digest string
}

func (h *Held) String() string {
	return fmt.Sprintf("held: the new file's %d rules would change %d objects in this namespace, more than tenants.maxChanges %d allows, so the rules before it stay in force. "+
		"To put it in force, annotate this ConfigMap %s=%s", h.Rules, h.Changes, h.Limit, ConfirmAnnotation, h.Digest)
}

// Hold returns the result in force while next, a file checked whose rules
// would change changes objects, more than limit, is held: the rules of
// prev, the result in force before (none when nil), reported on next's
// ConfigMap.
func Hold(prev *Result, next Result, changes, limit int) Result {
	held := Result{File: next.File}
	if prev != nil {
		held.Rules, held.Indexes, held.Total, held.Err, held.file = prev.Rules, prev.Indexes, len(prev.Rules), prev.Err, prev.file
	}
	held.Held = &Held{Changes: changes, Limit: limit, Rules: next.InForce(), Digest: Digest(next.File)}
	return held
}
