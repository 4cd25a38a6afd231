package reconcile

import (
	"cmp"
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/verdict"
)

// KeyChange is one annotation or label a Decision changes.
type KeyChange struct {
	// Kind is "annotation" or "label".
	Kind string `json:"kind"`
	Key  string `json:"key"`
	// Old is the current value; nil when the key is missing.
	Old *string `json:"old"`
	// New is the value to set; nil when the key is to be deleted.
	New *string `json:"new"`
	// Rule names the rule that sets or removes the key; "" for a key this
	// program set before that no rule wants any more.
	Rule string `json:"rule,omitempty"`
}

// Changes lists what d changes on obj, annotations before labels, each
// sorted by key.
func (d Decision) Changes(obj patch.Object) []KeyChange {
	return append(keyChanges("annotation", obj.GetAnnotations(), d.Change.Annotations, d.Evaluation),
		keyChanges("label", obj.GetLabels(), d.Change.Labels, d.Evaluation)...)
}

func keyChanges(kind string, current map[string]string, next map[string]*string, ev *rules.Evaluation) []KeyChange {
	out := make([]KeyChange, 0, len(next))
	for k, v := range next {
		c := KeyChange{Kind: kind, Key: k, New: v, Rule: ev.RuleFor(kind, k)}
		if old, ok := current[k]; ok {
			c.Old = &old
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b KeyChange) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// Explanation is everything the rules and this program make of one object:
// what `explain` shows.
type Explanation struct {
	// Ignored says why the object is left alone, or is "".
	Ignored string `json:"ignored,omitempty"`
	// Rules are the verdicts of every rule of the object's resource.
	Rules []verdict.Verdict `json:"rules"`
	// Keys are the object's current annotations and labels, with their owners.
	Keys []OwnedKey `json:"keys"`
	// Conflicts are keys two selecting rules want different values for.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Changes are what the controller would change.
	Changes []KeyChange `json:"changes"`
	// Audit is what rules in audit mode would change.
	Audit []KeyChange `json:"audit,omitempty"`
	// Problems are values rules could not read from the object.
	Problems []string `json:"problems,omitempty"`
}

// OwnedKey is one annotation or label an object carries, and the field
// managers that own it in its managedFields (none: nobody recorded it).
type OwnedKey struct {
	Kind   string   `json:"kind"`
	Key    string   `json:"key"`
	Value  string   `json:"value"`
	Owners []string `json:"owners"`
}

// Conflict is two selecting rules that want different values for one key;
// the rule named Kept wins, by file order.
type Conflict struct {
	Kind    string `json:"kind"`
	Key     string `json:"key"`
	Kept    string `json:"kept"`
	Dropped string `json:"dropped"`
}

// Explain explains obj, a whole object of t as the API server returns it
// (managedFields included), as Decide decides it for manager.
func Explain(t *rules.Target, obj patch.Object, look source.Lookup, manager string) (Explanation, error) {
	d, err := Decide(t, obj, look, manager)
	if err != nil {
		return Explanation{}, err
	}
	owners := patch.OwnersOf(obj.GetManagedFields())
	x := Explanation{
		Ignored:  d.Ignored,
		Rules:    t.Explain(obj, look),
		Keys:     append(ownedKeys("annotation", obj.GetAnnotations(), owners.Annotations), ownedKeys("label", obj.GetLabels(), owners.Labels)...),
		Changes:  d.Changes(obj),
		Problems: d.Evaluation.Problems,
	}
	for _, c := range d.Evaluation.Conflicts {
		x.Conflicts = append(x.Conflicts, Conflict{Kind: c.Kind, Key: c.Key, Kept: c.Kept, Dropped: c.Dropped})
	}
	for _, a := range d.Audit {
		for _, c := range (Decision{Change: a.Change, Evaluation: &rules.Evaluation{}}).Changes(obj) {
			c.Rule = a.Rule
			x.Audit = append(x.Audit, c)
		}
	}
	return x, nil
}

func ownedKeys(kind string, current map[string]string, owners map[string][]string) []OwnedKey {
	out := make([]OwnedKey, 0, len(current))
	for k, v := range current {
		out = append(out, OwnedKey{Kind: kind, Key: k, Value: v, Owners: owners[k]})
	}
	slices.SortFunc(out, func(a, b OwnedKey) int { return cmp.Compare(a.Key, b.Key) })
	return out
}
