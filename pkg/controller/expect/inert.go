package expect

import (
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// setOnly are the annotation and label keys the rules of target set and
// none of them reads; none at all when the rules read fields of the
// object or one reports in audit mode.
type setOnly struct {
	target              *rules.Target
	annotations, labels sets.Set[string]
}

func newSetOnly(t *rules.Target) *setOnly {
	s := &setOnly{target: t}
	reads := t.Reads()
	if reads.Whole {
		return s // the rules read fields of the object, which may be any key
	}
	for _, r := range t.Rules {
		if r.Audit() {
			return s // what it would change depends on every key it sets
		}
	}
	set := t.Projection()
	s.annotations = set.Annotations.Difference(reads.Annotations)
	s.labels = set.Labels.Difference(reads.Labels)
	return s
}

// Inert reports whether a write of change to an object of t is inert: it
// changes only keys that t's rules set and none of them reads (selects
// by, removes, tests in a condition or reads in a value), so its echo
// changes neither which rules select the object nor what they want of
// it, and a sync of the echo would find nothing to do. A rule that reads
// a key another rule sets (a chain) makes that key's writes not inert:
// the echo's sync takes the chain's next step.
func (e *Echoes) Inert(t *rules.Target, change patch.Change) bool {
	e.mu.Lock()
	s := e.inert[t.GVR]
	if s == nil || s.target != t {
		s = newSetOnly(t)
		e.inert[t.GVR] = s
	}
	e.mu.Unlock()
	for k := range change.Annotations {
		if !s.annotations.Has(k) {
			return false
		}
	}
	for k := range change.Labels {
		if !s.labels.Has(k) {
			return false
		}
	}
	return true
}
