package reconcile

import (
	"cmp"
	"iter"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// States of a key a rule sets or removes on an object, as coverage counts
// them (KeyState).
const (
	// StateCompliant: the object carries what the rule wants of the key.
	StateCompliant = "compliant"
	// StateForeign: the rule sets the key only where absent (ifAbsent),
	// and another field manager holds it with another value.
	StateForeign = "foreign"
	// StatePending: the controller will write the key, or a rule in audit
	// mode would.
	StatePending = "pending"
	// StateSourceMissing: the field or related object the value reads is
	// absent, and the rule gives no default.
	StateSourceMissing = "source-missing"
	// StateInvalid: the value computed is not valid for the key, and the
	// rule neither makes it valid nor gives a default.
	StateInvalid = "invalid"
	// StateError: the rule's expression for the key failed.
	StateError = "error"
	// StateOptedOut: the object or its namespace opts out, and the rule
	// allows it.
	StateOptedOut = "opted-out"
	// StateFighting: the controller would write the key, but another field
	// manager keeps reverting it, and writes to the object back off.
	StateFighting = "fighting"
	// StateUnrecorded: the key holds its default because its value is
	// recorded from the admission request, which the object was not
	// admitted with (it existed before the rule, or the policies were not
	// in force): counted apart from compliant, as no request will ever
	// give it the value.
	StateUnrecorded = "unrecorded"
)

// States are the states of KeyState, in the order reports list them.
var States = []string{StateCompliant, StatePending, StateForeign, StateSourceMissing, StateInvalid, StateError, StateOptedOut, StateFighting, StateUnrecorded}

// KeyState is the state of one annotation or label that a rule selecting
// an object sets or removes there.
type KeyState struct {
	Rule string `json:"rule"`
	// Kind is "annotation" or "label".
	Kind  string `json:"kind"`
	Key   string `json:"key"`
	State string `json:"state"`
}

// unsetStates are the states of the keys a rule could not compute, by
// rules.Unset reason.
var unsetStates = map[string]string{
	rules.ReasonSourceMissing: StateSourceMissing,
	rules.ReasonInvalid:       StateInvalid,
	rules.ReasonError:         StateError,
}

// Coverage calls yield with the state of each key that the rules selecting
// obj set or remove, as d decided them for obj, in an order that depends
// only on the decision: a key that two rules want counts for the rule
// whose value is set (file order), and a rule in audit mode counts as if
// it were enforced alone. changed is the state of the keys d's change
// writes: StatePending; StateFighting when the writes to obj are held back
// because another field manager reverts them; StateCompliant once written.
func (d Decision) Coverage(obj metav1.Object, changed string, yield func(KeyState)) {
	ev := d.Evaluation
	for _, kind := range keyKinds(obj, ev.Desired, d.Change) {
		for key, v := range sorted(kind.want) {
			rule := ev.RuleFor(kind.name, key)
			state := d.optedOut(rule)
			if state == "" {
				state = kind.setState(key, v, changed, func() bool { return slices.Contains(ev.Held(kind.name), key) })
				if state == StateCompliant && kind.have[key] == v && ev.Unrecorded(kind.name, key) {
					state = StateUnrecorded
				}
			}
			yield(KeyState{rule, kind.name, key, state})
		}
		for _, key := range kind.remove {
			rule := ev.RuleFor(kind.name, key)
			state := d.optedOut(rule)
			if state == "" {
				state = kind.removeState(key, changed)
			}
			yield(KeyState{rule, kind.name, key, state})
		}
	}
	for _, a := range ev.Audited {
		var change patch.Change
		if i := slices.IndexFunc(d.Audit, func(c AuditChange) bool { return c.Rule == a.Rule.Name }); i >= 0 {
			change = d.Audit[i].Change
		}
		for _, kind := range keyKinds(obj, a.Desired, change) {
			for key, v := range sorted(kind.want) {
				yield(KeyState{a.Rule.Name, kind.name, key, cmp.Or(d.optedOut(a.Rule.Name), kind.setState(key, v, StatePending, nil))})
			}
			for _, key := range kind.remove {
				yield(KeyState{a.Rule.Name, kind.name, key, cmp.Or(d.optedOut(a.Rule.Name), kind.removeState(key, StatePending))})
			}
		}
	}
	for _, u := range ev.Unset {
		if d.sets(u.Rule, u.Kind, u.Key) {
			continue // a default stands in: counted above
		}
		yield(KeyState{u.Rule, u.Kind, u.Key, cmp.Or(d.optedOut(u.Rule), unsetStates[u.Reason])})
	}
}

// Why returns why the rule named by s could not compute s's key on the
// object, as explain says it, or "".
func (d Decision) Why(s KeyState) string {
	prefix := s.Rule + ": " + s.Key + ": "
	for _, p := range d.Evaluation.Problems {
		if why, ok := strings.CutPrefix(p, prefix); ok {
			return why
		}
	}
	return ""
}

// sortOnStack is how many keys sorted sorts without allocating: more
// than a rule usually sets on one object.
const sortOnStack = 16

// sorted yields the keys and values of m by key; it allocates nothing for
// a map of up to sortOnStack keys, as every sync of every object counts
// its coverage.
func sorted(m map[string]string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		var buf [sortOnStack]string
		keys := buf[:0]
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}

// keyKind is what a decision wants of one kind of key, and what an object
// carries of it.
type keyKind struct {
	name     string
	have     map[string]string
	want     map[string]string
	remove   []string
	ifAbsent map[string]bool
	change   map[string]*string
}

// keyKinds returns what want and change say of obj's annotations, then of
// its labels.
func keyKinds(obj metav1.Object, want patch.Desired, change patch.Change) [2]keyKind {
	return [2]keyKind{
		{"annotation", obj.GetAnnotations(), want.Annotations, want.RemoveAnnotations, want.IfAbsentAnnotations, change.Annotations},
		{"label", obj.GetLabels(), want.Labels, want.RemoveLabels, want.IfAbsentLabels, change.Labels},
	}
}

// setState is the state of key, which the rule wants set to v: changed
// when the change writes it, else pending when obj lacks it; held, when
// not nil, says the object keeps the value it has because the expression
// failed.
func (k keyKind) setState(key, v, changed string, held func() bool) string {
	have, present := k.have[key]
	_, inChange := k.change[key]
	switch {
	case inChange:
		return changed
	case present && have == v:
		return StateCompliant
	case present && k.ifAbsent[key]:
		return StateForeign
	case present && held != nil && held():
		return StateError
	case present:
		return StateCompliant // recorded once: kept as it is
	default:
		return StatePending
	}
}

// removeState is the state of key, which the rule removes: changed when
// the change deletes it.
func (k keyKind) removeState(key, changed string) string {
	if _, inChange := k.change[key]; inChange {
		return changed
	}
	if _, present := k.have[key]; present {
		return StatePending
	}
	return StateCompliant
}

// optedOut returns StateOptedOut when the object opts out and the rule
// named allows it, else "".
func (d Decision) optedOut(rule string) string {
	if d.Ignored == "" {
		return ""
	}
	for _, r := range d.Evaluation.Selected {
		if r.Name == rule && r.OptOutLocked {
			return ""
		}
	}
	return StateOptedOut
}

// sets reports whether the rule named sets the key of kind on the object:
// its value, or its default, is in the decision.
func (d Decision) sets(rule, kind, key string) bool {
	ev := d.Evaluation
	if wants(ev.Desired, kind, key) && ev.RuleFor(kind, key) == rule {
		return true
	}
	for _, a := range ev.Audited {
		if a.Rule.Name == rule {
			return wants(a.Desired, kind, key)
		}
	}
	return false
}

// wants reports whether d sets the key of kind.
func wants(d patch.Desired, kind, key string) bool {
	m := d.Annotations
	if kind == "label" {
		m = d.Labels
	}
	_, ok := m[key]
	return ok
}
