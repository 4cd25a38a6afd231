package reports

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// Key names an object: its resource, namespace and name.
type Key struct {
	GVR             schema.GroupVersionResource
	Namespace, Name string
}

// Finding is a key that a rule sets or removes on an object and that is
// not as the rule wants it: its state (Failing) and why, as explain says.
type Finding struct {
	Rule, Kind, Key, State, Why string
}

// Verdict is what the reports say of one object: how many of the keys
// the rules set on it are as wanted (Pass) or left alone because it opts
// out (Skip), and the others. The zero Verdict says nothing: the object is
// not reported.
type Verdict struct {
	GVK      schema.GroupVersionKind
	UID      types.UID
	Pass     int
	Skip     int
	Findings []Finding
}

// failing are the states a report lists: the keys not as the rules want.
var failing = map[string]bool{
	reconcile.StatePending:       true,
	reconcile.StateSourceMissing: true,
	reconcile.StateInvalid:       true,
	reconcile.StateError:         true,
	reconcile.StateFighting:      true,
}

// Failing reports whether a key in state is listed in a report: pending,
// source-missing, invalid, error and fighting are; compliant and foreign
// pass, as do the states not named here, and opted-out is skipped.
func Failing(state string) bool { return failing[state] }

// Count adds the state of one key, as d decided it, to v, with the reason
// of a failing one.
func (v *Verdict) Count(s reconcile.KeyState, d *reconcile.Decision) {
	switch {
	case failing[s.State]:
		v.Findings = append(v.Findings, Finding{s.Rule, s.Kind, s.Key, s.State, d.Why(s)})
	case s.State == reconcile.StateOptedOut:
		v.Skip++
	default:
		v.Pass++
	}
}

// empty reports whether v says nothing.
func (v Verdict) empty() bool { return v.Pass == 0 && v.Skip == 0 && len(v.Findings) == 0 }

// equal reports whether v and w say the same.
func (v Verdict) equal(w Verdict) bool {
	return v.GVK == w.GVK && v.UID == w.UID && v.Pass == w.Pass && v.Skip == w.Skip && slices.Equal(v.Findings, w.Findings)
}
