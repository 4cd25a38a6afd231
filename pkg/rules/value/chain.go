package value

import (
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/rules/labelvalue"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Settled is how the default chain of a key whose value is missing ends.
type Settled struct {
	// Value is the value set, when OK.
	Value string
	OK    bool
	// MadeValid says how ifInvalid made the key's own value valid; ""
	// when another level gave Value.
	MadeValid string
	// Defaulted says, when a default gave Value, why each level before it
	// gave none, and which form gave it, if not a literal.
	Defaulted string
	// Missing is the last level's Missing when no level gave a valid
	// value, or the one whose expression failed (ReasonError): such a key
	// is held, and Value is the chain's literal, if any.
	Missing Missing
}

// Level reads the value of key given by level, a value form given as a
// default: the value, or why it is missing.
type Level func(level *spec.Metadata, key string) (string, Missing, bool)

// Settle follows the default chain of the key of miss, whose value m, the
// key's own level, does not give: the first level whose value is valid,
// or made valid by that level's ifInvalid, sets it; a missing source or
// an invalid value falls to the next level, read with read; a literal
// default ends the chain. An expression that fails ends it too (see
// Settled.Missing).
func Settle(m *spec.Metadata, miss Missing, read Level) Settled {
	var whys []string
	for depth := 0; ; depth++ {
		if mode := m.IfInvalid[miss.Key]; miss.Reason == ReasonInvalid && mode != "" {
			v, how, ok := labelvalue.MakeValid(mode, miss.Value)
			if ok && depth == 0 {
				return Settled{Value: v, OK: true, MadeValid: how}
			}
			if ok {
				return Settled{Value: v, OK: true, Defaulted: strings.Join(whys, "; ") + "; set by the default " + Form(m, miss.Key) + ", " + how}
			}
			miss.Why += " (ifInvalid: " + mode + " leaves no valid label value)"
		}
		whys = append(whys, miss.Why)
		next := m.Fallback[miss.Key]
		if miss.Reason == ReasonError || next == nil {
			d, ok := Literal(m, miss.Key)
			miss.Why = strings.Join(whys, "; ")
			return Settled{Value: d, OK: ok, Defaulted: miss.Why, Missing: miss}
		}
		v, nextMiss, ok := read(next, miss.Key)
		if ok {
			return Settled{Value: v, OK: true, Defaulted: strings.Join(whys, "; ") + "; set by the default " + Form(next, miss.Key)}
		}
		m, miss = next, nextMiss
	}
}

// Literal returns the literal that ends the default chain of key at m.
func Literal(m *spec.Metadata, key string) (string, bool) {
	for ; m != nil; m = m.Fallback[key] {
		if d, ok := m.Default[key]; ok {
			return d, true
		}
	}
	return "", false
}

// Form says how m reads the value of key: "fromNamespace label \"team\"".
func Form(m *spec.Metadata, key string) string {
	if t, ok := m.From[key]; ok {
		return "jsonPath " + t
	}
	if k, ok := m.FromNamespace[key]; ok {
		return "fromNamespace " + k.String()
	}
	if k, ok := m.FromRelated[key]; ok {
		return k.Source.Field + " " + k.String()
	}
	return "cel " + m.CEL[key]
}
