package reconcile

import (
	"maps"
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// FieldManager is the field manager kube-annotator writes as, and whose
// entries in an object's managedFields say which keys it set.
const FieldManager = "kube-annotator"

// OtherManagers is the manager name of a managedFields entry that stands
// for the entries of every other field manager, in an object whose
// managedFields a cache trimmed to save memory. Decide needs of other
// managers' entries only whether there are any (an object with no
// managedFields at all is written differently, see patch.Requests), never
// what they own: an object whose other managers' entries are replaced by
// one entry named OtherManagers — or dropped, when entries of the deciding
// manager remain — gets the same Decision as the whole object.
const OtherManagers = "(other managers)"

// Decision is what Decide found for one object.
type Decision struct {
	// Evaluation is what the rules want of the object, with the rules that
	// conflict on it and the values that could not be read from it.
	Evaluation *rules.Evaluation
	// Ignored says why the object is left alone — it or its namespace
	// carries rulefile.IgnoreAnnotation — or is "" when the rules apply.
	// An ignored object gets no Audit, and a Change only from the rules
	// that do not allow opting out (allowOptOut: false).
	Ignored string
	// Change is what must change; empty when the object already carries
	// what the rules want.
	Change patch.Change
	// Requests are the writes that make Change, in order; none when Change
	// is empty.
	Requests []patch.Request
	// Audit is, for each selecting rule in audit mode that would change
	// the object, what it would change. Nothing is written for it.
	Audit []AuditChange
	// Owns is set when the object carries keys the deciding manager owns
	// (before Change), whether it opts out or not: its resource must be
	// recorded, even when nothing changes, and is not pruned yet.
	Owns bool
}

// AuditChange is what one rule in audit mode would change on an object,
// were it enforced alone.
type AuditChange struct {
	Rule   string
	Change patch.Change
}

// Empty reports whether nothing must change.
func (d Decision) Empty() bool { return d.Change.Empty() }

// Decide returns what must change on obj for the rules of t to hold, and
// the requests that make that change as manager. Keys are deleted only
// when a rule removes them or when manager owns them — in obj's
// managedFields, or listed in its admission marker — and no rule wants them
// any more; keys a rule in audit mode wants are never deleted that way, so
// that putting a rule in audit mode changes nothing. An object that opts
// out, or whose namespace does, is left alone but for what the rules that
// do not allow it want. look finds obj's namespace, for the opt-out and
// for rules that select by its labels or read its labels or annotations,
// and the related objects rules read values from. Decide only reads obj,
// which may be an object from an informer's cache.
func Decide(t *rules.Target, obj patch.Object, look source.Lookup, manager string) (Decision, error) {
	ev := t.Evaluate(obj, look)
	marker := patch.MarkerKey(manager, t.GVR.GroupResource())
	owned := patch.OwnedOrMarked(obj.GetManagedFields(), manager, obj.GetAnnotations(), marker)
	d := Decision{Evaluation: ev, Ignored: t.Ignored(obj, look), Owns: carries(obj, owned)}
	if d.Ignored != "" {
		return decideLocked(d, t, obj, look, marker)
	}
	for _, a := range ev.Audited {
		owned = keep(owned, a.Desired)
		if ch := patch.Plan(obj.GetAnnotations(), obj.GetLabels(), patch.Owned{}, a.Desired); !ch.Empty() {
			d.Audit = append(d.Audit, AuditChange{Rule: a.Rule.Name, Change: ch})
		}
	}
	desired := hold(ev, obj, &owned)
	owned, forfeited := forfeit(owned, obj, manager, desired)
	d.Change = patch.PlanMarked(obj.GetAnnotations(), obj.GetLabels(), owned, marker, desired)
	d.Change = patch.Unmark(d.Change, obj.GetAnnotations(), marker, forfeited)
	return withRequests(d, obj)
}

// decideLocked completes d for obj, an object that opts out: only the
// rules that do not allow it (allowOptOut: false) apply, and nothing else
// is changed or pruned on it.
func decideLocked(d Decision, t *rules.Target, obj patch.Object, look source.Lookup, marker string) (Decision, error) {
	locked := t.Locked()
	if locked == nil {
		return d, nil
	}
	ev := locked.Evaluate(obj, look)
	d.Change = patch.PlanMarked(obj.GetAnnotations(), obj.GetLabels(), patch.Owned{}, marker, hold(ev, obj, &patch.Owned{}))
	return withRequests(d, obj)
}

// withRequests completes d with the requests that make its change on obj;
// an empty change needs none.
func withRequests(d Decision, obj patch.Object) (Decision, error) {
	if d.Change.Empty() {
		return d, nil
	}
	requests, err := patch.Requests(obj, d.Change)
	if err != nil {
		return Decision{}, err
	}
	d.Requests = requests
	return d, nil
}

// forfeit drops from owned, which it may modify, the keys the rules set
// only where absent (ifAbsent) that someone else changed since manager set
// them, and returns them: they are theirs now, neither updated nor pruned.
//
// For a key manager wrote, the API server says so: an update by another
// field manager that changes the key moves it to that manager's
// managedFields entry, so it is not in owned. A key set at admission is
// owned only through the marker annotation, which no write by anyone else
// updates; for it, a value other than the one the rules want is taken as
// someone else's change (the API server records no owner to ask), and the
// marker must stop listing it (see patch.Unmark).
func forfeit(owned patch.Owned, obj patch.Object, manager string, d patch.Desired) (patch.Owned, patch.Owned) {
	if len(d.IfAbsentAnnotations)+len(d.IfAbsentLabels) == 0 {
		return owned, patch.Owned{}
	}
	fields := patch.OwnedBy(obj.GetManagedFields(), manager)
	var gone patch.Owned
	gone.Annotations = forfeitKeys(owned.Annotations, fields.Annotations, d.IfAbsentAnnotations, d.Annotations, obj.GetAnnotations())
	gone.Labels = forfeitKeys(owned.Labels, fields.Labels, d.IfAbsentLabels, d.Labels, obj.GetLabels())
	return owned, gone
}

// forfeitKeys deletes from owned, and returns, the keys of ifAbsent that
// are owned but not in fields and whose value in have is not want's.
func forfeitKeys(owned, fields, ifAbsent map[string]bool, want, have map[string]string) map[string]bool {
	var gone map[string]bool
	for k := range ifAbsent {
		if v, ok := have[k]; ok && owned[k] && !fields[k] && v != want[k] {
			delete(owned, k)
			if gone == nil {
				gone = map[string]bool{}
			}
			gone[k] = true
		}
	}
	return gone
}

// carries reports whether obj carries a key of owned.
func carries(obj patch.Object, owned patch.Owned) bool {
	for _, kv := range []struct {
		keys map[string]bool
		have map[string]string
	}{{owned.Annotations, obj.GetAnnotations()}, {owned.Labels, obj.GetLabels()}} {
		for k := range kv.keys {
			if _, ok := kv.have[k]; ok {
				return true
			}
		}
	}
	return false
}

// keep drops from owned, which it may modify, the keys want sets, so that
// they are not deleted.
func keep(owned patch.Owned, want patch.Desired) patch.Owned {
	for k := range want.Annotations {
		delete(owned.Annotations, k)
	}
	for k := range want.Labels {
		delete(owned.Labels, k)
	}
	return owned
}

// hold returns what ev wants of obj, but for the keys whose expression
// failed (rules.Evaluation.Held) or that a rule records
// (rules.Evaluation.Recorded), and that obj carries: they keep the value
// obj has, neither changed nor deleted, and are dropped from owned too. ev is shared: what it wants is copied before a key is
// dropped from it.
func hold(ev *rules.Evaluation, obj patch.Object, owned *patch.Owned) patch.Desired {
	d := ev.Desired
	for _, kind := range []struct {
		name   string
		have   map[string]string
		want   *map[string]string
		absent *map[string]bool
		owned  map[string]bool
	}{
		{"annotation", obj.GetAnnotations(), &d.Annotations, &d.IfAbsentAnnotations, owned.Annotations},
		{"label", obj.GetLabels(), &d.Labels, &d.IfAbsentLabels, owned.Labels},
	} {
		copied := false
		for _, k := range slices.Concat(ev.Held(kind.name), ev.Recorded(kind.name)) {
			if _, ok := kind.have[k]; !ok {
				continue
			}
			if !copied {
				*kind.want, *kind.absent, copied = maps.Clone(*kind.want), maps.Clone(*kind.absent), true
			}
			delete(*kind.want, k)
			delete(*kind.absent, k)
			delete(kind.owned, k)
		}
	}
	return d
}
