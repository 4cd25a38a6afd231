package fight

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// Reason and Action are those of the Warning Event recorded on an object
// in a fight; its note is Fight.Note.
const (
	Reason = "Fighting"
	Action = "Backoff"
)

// Unknown is the manager of a fight whose object's managedFields name no
// other manager.
const Unknown = "unknown"

// Fight is what is reported of an object in a fight.
type Fight struct {
	// Manager is the other field manager found first: the one that owns
	// the keys the controller writes again, or, when none does (it
	// deleted them), the one that changed the object last; Unknown when
	// managedFields say neither.
	Manager string `json:"manager"`
	// Managers are the other field managers seen in the fight, Manager
	// first, at most MaxManagers.
	Managers []string `json:"managers"`
	// Keys are the keys fought over, each with the rule that wants it.
	Keys []Key `json:"keys"`
	// Wait is how long the controller's next write to the object waits.
	Wait time.Duration `json:"-"`
}

// Key is one key fought over.
type Key struct {
	// Kind is "annotation" or "label".
	Kind string `json:"kind"`
	Key  string `json:"key"`
	// Rule is the rule that wants the key; "" for a key no rule wants any
	// more, which the controller deletes.
	Rule string `json:"rule"`
}

// Rules returns the rules of f's keys, sorted, without repeats.
func (f Fight) Rules() []string {
	var out []string
	for _, k := range f.Keys {
		out = append(out, k.Rule)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Note is the Event's note: "Field manager "m" reverts annotation a (rule
// r), label l (no rule): more than 3 writes in 1m0s; the writes back off,
// the next waits 1s", or with several managers "Field managers "m", "n"
// revert …". ParseNote reads it back.
func (f Fight) Note() string {
	keys := make([]string, len(f.Keys))
	for i, k := range f.Keys {
		rule := "no rule"
		if k.Rule != "" {
			rule = "rule " + k.Rule
		}
		keys[i] = fmt.Sprintf("%s %s (%s)", k.Kind, k.Key, rule)
	}
	managers := f.Managers
	if len(managers) == 0 {
		managers = []string{f.Manager}
	}
	quoted := make([]string, len(managers))
	for i, m := range managers {
		quoted[i] = strconv.Quote(m)
	}
	who := "Field manager " + quoted[0] + " reverts"
	if len(quoted) > 1 {
		who = "Field managers " + strings.Join(quoted, ", ") + " revert"
	}
	return fmt.Sprintf("%s %s: more than %d writes in %v; the writes back off, the next waits %v",
		who, strings.Join(keys, ", "), Writes, Window, f.Wait)
}

const quotedRE = `"(?:[^"\\]|\\.)*"`

var (
	noteRE   = regexp.MustCompile(`^Field (?:manager (` + quotedRE + `) reverts|managers (` + quotedRE + `(?:, ` + quotedRE + `)+) revert) (.+?): more than \d+ writes in [^;]+; the writes back off, the next waits (\S+)$`)
	quotesRE = regexp.MustCompile(quotedRE)
	keyRE    = regexp.MustCompile(`^(annotation|label) (\S+) \((?:rule (\S+)|no rule)\)$`)
)

// ParseNote reads a Fight from the note of a Reason Event; ok is false
// when note is not one.
func ParseNote(note string) (f Fight, ok bool) {
	m := noteRE.FindStringSubmatch(note)
	if m == nil {
		return Fight{}, false
	}
	for _, q := range quotesRE.FindAllString(m[1]+m[2], -1) {
		manager, err := strconv.Unquote(q)
		if err != nil {
			return Fight{}, false
		}
		f.Managers = append(f.Managers, manager)
	}
	wait, err := time.ParseDuration(m[4])
	if err != nil {
		return Fight{}, false
	}
	f.Manager, f.Wait = f.Managers[0], wait
	for _, s := range strings.Split(m[3], ", ") {
		km := keyRE.FindStringSubmatch(s)
		if km == nil {
			return Fight{}, false
		}
		f.Keys = append(f.Keys, Key{Kind: km[1], Key: km[2], Rule: km[3]})
	}
	return f, true
}

// OtherManager names the field manager the controller, writing as ours,
// fights with over keys, from the object's managedFields as the API
// server returns them: of the managers that own one of keys, the one
// whose entry changed last; when none does (a key deleted), the manager
// other than ours whose entry changed last; Unknown when there is none.
func OtherManager(entries []metav1.ManagedFieldsEntry, ours string, keys []Key) string {
	owners := patch.OwnersOf(entries)
	owning := map[string]bool{}
	for _, k := range keys {
		m := owners.Annotations
		if k.Kind == "label" {
			m = owners.Labels
		}
		for _, o := range m[k.Key] {
			owning[o] = o != ours
		}
	}
	best, at := Unknown, time.Time{}
	for _, pass := range []func(string) bool{func(m string) bool { return owning[m] }, func(m string) bool { return m != ours }} {
		for _, e := range entries {
			if !pass(e.Manager) {
				continue
			}
			var t time.Time
			if e.Time != nil {
				t = e.Time.Time
			}
			if best == Unknown || t.After(at) {
				best, at = e.Manager, t
			}
		}
		if best != Unknown {
			return best
		}
	}
	return best
}
