package tenants

import (
	"fmt"
	"strings"
)

// StatusAnnotation is the annotation of a tenant's ConfigMap that says
// which of its rules are in force and why the others are not.
const StatusAnnotation = "kube-annotator.io/tenant-status"

// MaxStatus bounds the length of a status: what is refused past it is
// counted, not listed.
const MaxStatus = 4096

// InForce returns how many of the file's rules are in force.
func (r Result) InForce() int {
	if r.Err != nil {
		return 0
	}
	return len(r.Rules)
}

// Status says, in one text for the tenant, how many of the file's rules
// are in force and, for the others, what refused them and why.
func (r Result) Status() string {
	if r.Err != nil {
		return truncate("no rule in force: " + r.Err.Error())
	}
	var b strings.Builder
	if r.Held != nil {
		fmt.Fprintf(&b, "%s\n", r.Held)
	}
	if r.Stale != nil {
		fmt.Fprintf(&b, "the file in the ConfigMap cannot be read, so the rules last read stay in force: %s\n", r.Stale)
	}
	fmt.Fprintf(&b, "%d of %d rules in force", len(r.Rules), r.Total)
	if len(r.Refused) > 0 {
		b.WriteString("; refused:")
		for i, ref := range r.Refused {
			line := "\n" + ref.String()
			if b.Len()+len(line) > MaxStatus-64 {
				fmt.Fprintf(&b, "\n… and %d more", len(r.Refused)-i)
				break
			}
			b.WriteString(line)
		}
	}
	return truncate(b.String())
}

// truncate cuts s to MaxStatus bytes, on a rune boundary.
func truncate(s string) string {
	if len(s) <= MaxStatus {
		return s
	}
	s = s[:MaxStatus-3]
	for len(s) > 0 && s[len(s)-1]&0xc0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xc0 {
		s = s[:len(s)-1]
	}
	return s + "…"
}
