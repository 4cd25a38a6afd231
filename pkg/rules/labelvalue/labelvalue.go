package labelvalue

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The modes of ifInvalid: how a value that is no valid label value is
// made one. A valid value is kept as it is, whatever the mode.
const (
	// Truncate drops the '-', '_' and '.' that start the value, keeps its
	// first MaxLength characters, and drops the '-', '_' and '.' that then
	// end it. It drops no other character: a value that still holds one a
	// label value cannot (a space, a '/', a non-ASCII letter) stays
	// invalid.
	Truncate = "truncate"
	// Sanitize replaces each run of characters a label value cannot hold
	// (anything but ASCII letters, digits, '-', '_' and '.') with one '-',
	// then truncates as Truncate does.
	Sanitize = "sanitize"
	// Hash sanitizes the value, cut to leave room, and ends it with '-'
	// and the first HashLength hexadecimal digits of the SHA-256 of the
	// whole value as read: two values that differ anywhere get different
	// labels. A value of which nothing is kept is the hash alone.
	Hash = "hash"
)

// Modes are the modes of ifInvalid, in the order the docs list them.
var Modes = []string{Truncate, Sanitize, Hash}

// ModesText names the modes as messages do: "truncate, sanitize or hash".
var ModesText = strings.Join(Modes[:len(Modes)-1], ", ") + " or " + Modes[len(Modes)-1]

// MaxLength is the length of the longest label value.
const MaxLength = validation.LabelValueMaxLength

// HashLength is how many hexadecimal digits of the SHA-256 Hash appends.
const HashLength = 10

// Valid reports whether v is a valid label value.
func Valid(v string) bool { return len(validation.IsValidLabelValue(v)) == 0 }

// MakeValid returns v made a valid label value as mode (one of Modes)
// says, and how, for explain ("truncated from 91 characters"). A valid v
// is returned as it is, with how empty. ok is false when mode leaves no
// valid value, or none but the empty one, which sets no label: v is then
// no valid label value, and stays so.
func MakeValid(mode, v string) (out, how string, ok bool) {
	if Valid(v) {
		return v, "", true
	}
	var done string
	switch mode {
	case Truncate:
		out, done = truncate(v, MaxLength), "truncated"
	case Sanitize:
		out, done = truncate(sanitize(v), MaxLength), "sanitized"
	case Hash:
		sum := sha256.Sum256([]byte(v))
		out, done = hex.EncodeToString(sum[:])[:HashLength], "hashed"
		if prefix := truncate(sanitize(v), MaxLength-HashLength-1); prefix != "" {
			out = prefix + "-" + out
		}
	default:
		return "", "", false
	}
	if out == "" || !Valid(out) {
		return "", "", false
	}
	return out, fmt.Sprintf("%s from %d characters", done, utf8.RuneCountInString(v)), true
}

// trimmed are the characters a label value holds but may not start or
// end with.
const trimmed = "-_."

// truncate drops the trimmed characters that start v, keeps at most max
// bytes, and drops the trimmed characters that then end it.
func truncate(v string, max int) string {
	v = strings.TrimLeft(v, trimmed)
	if len(v) > max {
		v = v[:max]
	}
	return strings.TrimRight(v, trimmed)
}

// sanitize replaces each run of characters a label value cannot hold
// with one '-'. A byte that is not UTF-8 is such a character.
func sanitize(v string) string {
	var b strings.Builder
	replacing := false
	for _, r := range v {
		if labelChar(r) {
			b.WriteRune(r)
			replacing = false
			continue
		}
		if !replacing {
			b.WriteByte('-')
		}
		replacing = true
	}
	return b.String()
}

// labelChar reports whether a label value may hold r.
func labelChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(trimmed, r)
}
