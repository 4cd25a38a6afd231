package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/glob"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// KeySet is every label or annotation of a related object whose key
// matches one of Keys and none of Except, copied to the object under the
// same key: an item of a rule's copy, such as {fromNamespace: {labels:
// ["team*"], except: [team-internal]}}; or the keys and values a CEL
// expression computes from the object: {cel: {annotations: "…"}}.
type KeySet struct {
	// Source is the object read: source.Namespace, source.Node or
	// source.Owner (then Owners says which owner); nil for CEL.
	Source *source.Source
	// CEL is the expression that yields the keys and their values, a
	// map(string, string), for an item {cel: …}; Keys is then empty.
	CEL string
	// Kind is "label" or "annotation": the kind read, and written.
	Kind string
	// Keys and Except are globs of keys, in which * and ? match '/' too
	// (glob.MatchKey): "*" is every key, "example.com/*" a prefix.
	Keys, Except []string
	// Owners says which owner is read, for source.Owner; nil for any
	// other source.
	Owners *Owners
	// Refs says which object is read, for source.Ref; nil for any other
	// source.
	Refs *Refs
	// Item is the set's index in its rule's copy list, for messages.
	Item int
	// Once records the keys copied: each is written where the object
	// lacks it and then kept as it is, neither changed nor deleted,
	// whatever the source becomes.
	Once bool
}

// Matches reports whether s copies the key: any key, for CEL.
func (s *KeySet) Matches(key string) bool {
	match := func(g string) bool { return glob.MatchKey(g, key) }
	return (s.CEL != "" || slices.ContainsFunc(s.Keys, match)) && !slices.ContainsFunc(s.Except, match)
}

// From names the item's source as the file does: "fromNamespace", "cel".
func (s *KeySet) From() string {
	if s.Source == nil {
		return CELField
	}
	return s.Source.Field
}

// CELField is the field of a copy item computed in CEL.
const CELField = "cel"

// String formats s as in messages: `labels "team*" except "team-internal"`.
func (s *KeySet) String() string {
	if s.CEL != "" {
		return fmt.Sprintf("%ss %q", s.Kind, s.CEL)
	}
	out := fmt.Sprintf("%ss %s", s.Kind, quoted(s.Keys))
	if len(s.Except) > 0 {
		out += " except " + quoted(s.Except)
	}
	return out
}

func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// Copied returns the keys of from that s copies, with their values.
func (s *KeySet) Copied(from map[string]string) map[string]string {
	var out map[string]string
	for k, v := range from {
		if s.Matches(k) {
			out = Put(out, k, v)
		}
	}
	return out
}
