package labelvalue

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMakeValid checks each mode on the values a label cannot hold: too
// long, with characters a label value cannot hold, starting or ending with
// one it may hold but not there; and that a valid value is kept as it is.
func TestMakeValid(t *testing.T) {
	long := strings.Repeat("a", 91)
	tests := []struct {
		name, mode, in string
		want, how      string // want "" and how "": not ok
	}{
		{name: "valid, kept", mode: Truncate, in: "web", want: "web"},
		{name: "empty is valid", mode: Hash, in: "", want: ""},
		{name: "exactly 63, kept", mode: Truncate, in: strings.Repeat("b", 63), want: strings.Repeat("b", 63)},
		{name: "no mode", mode: "", in: long},
		{name: "unknown mode", mode: "shorten", in: long},

		{name: "truncate 64", mode: Truncate, in: strings.Repeat("c", 64), want: strings.Repeat("c", 63), how: "truncated from 64 characters"},
		{name: "truncate 91", mode: Truncate, in: long, want: long[:63], how: "truncated from 91 characters"},
		{name: "truncate ends on a dot", mode: Truncate, in: strings.Repeat("d", 62) + ".e", want: strings.Repeat("d", 62), how: "truncated from 64 characters"},
		{name: "truncate trailing dots", mode: Truncate, in: "release-1.2.", want: "release-1.2", how: "truncated from 12 characters"},
		{name: "truncate leading dash", mode: Truncate, in: "-_web", want: "web", how: "truncated from 5 characters"},
		{name: "truncate cuts an invalid tail", mode: Truncate, in: strings.Repeat("f", 63) + " tail", want: strings.Repeat("f", 63), how: "truncated from 68 characters"},
		{name: "truncate keeps a space: invalid", mode: Truncate, in: "hello world"},
		{name: "truncate keeps unicode: invalid", mode: Truncate, in: "café"},
		{name: "truncate of dots only: empty", mode: Truncate, in: "..."},

		{name: "sanitize a team", mode: Sanitize, in: "team a/b", want: "team-a-b", how: "sanitized from 8 characters"},
		{name: "sanitize spaces", mode: Sanitize, in: "hello world", want: "hello-world", how: "sanitized from 11 characters"},
		{name: "sanitize collapses a run", mode: Sanitize, in: "a  /  b", want: "a-b", how: "sanitized from 7 characters"},
		{name: "sanitize keeps valid dashes", mode: Sanitize, in: "a - b", want: "a---b", how: "sanitized from 5 characters"},
		{name: "sanitize unicode", mode: Sanitize, in: "café crème", want: "caf-cr-me", how: "sanitized from 10 characters"},
		{name: "sanitize trims", mode: Sanitize, in: " /team/web/ ", want: "team-web", how: "sanitized from 12 characters"},
		{name: "sanitize a path of 91", mode: Sanitize, in: "/" + strings.Repeat("ab/", 30), want: strings.Repeat("ab-", 21)[:62], how: "sanitized from 91 characters"},
		{name: "sanitize invalid UTF-8", mode: Sanitize, in: "a\xffb", want: "a-b", how: "sanitized from 3 characters"},
		{name: "sanitize all invalid: empty", mode: Sanitize, in: "日本語"},
		{name: "sanitize spaces only: empty", mode: Sanitize, in: "   "},

		{name: "hash 91", mode: Hash, in: long, want: long[:52] + "-9b9fe7f0a4", how: "hashed from 91 characters"},
		{name: "hash 64", mode: Hash, in: strings.Repeat("a", 64), want: strings.Repeat("a", 52) + "-ffe054fe7a", how: "hashed from 64 characters"},
		{name: "hash an image reference", mode: Hash, in: "registry.example.com/team/app:1.2", want: "registry.example.com-team-app-1.2-465eb3d033",
			how: "hashed from 33 characters"},
		{name: "hash a short invalid value", mode: Hash, in: "hello world", want: "hello-world-b94d27b993", how: "hashed from 11 characters"},
		{name: "hash all invalid: the hash alone", mode: Hash, in: "日本語", want: "77710aedc7", how: "hashed from 3 characters"},
		{name: "hash spaces only", mode: Hash, in: "   ", want: "0aad7da77d", how: "hashed from 3 characters"},
		{name: "hash trims the cut prefix", mode: Hash, in: strings.Repeat("g", 51) + "._" + strings.Repeat("h", 20), want: strings.Repeat("g", 51) + "-18b497eca9", how: "hashed from 73 characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, how, ok := MakeValid(tc.mode, tc.in)
			wantOK := tc.want != "" || tc.in == ""
			if got != tc.want || how != tc.how || ok != wantOK {
				t.Errorf("MakeValid(%q, %q) = %q, %q, %v; want %q, %q, %v", tc.mode, tc.in, got, how, ok, tc.want, tc.how, wantOK)
			}
			if ok && !Valid(got) {
				t.Errorf("MakeValid(%q, %q) = %q, which is no valid label value", tc.mode, tc.in, got)
			}
		})
	}
}

// Two long values that share their first 53 characters get different
// labels when hashed, and the same value always the same label.
func TestHashTellsLongValuesApart(t *testing.T) {
	common := strings.Repeat("a", 53)
	x, _, _ := MakeValid(Hash, common+strings.Repeat("x", 38))
	y, _, _ := MakeValid(Hash, common+strings.Repeat("y", 38))
	if x == y || x != common[:52]+"-f571365849" || y != common[:52]+"-a624ce218b" {
		t.Errorf("hashed %q and %q; want two labels, each ending with its value's hash", x, y)
	}
	if again, _, _ := MakeValid(Hash, common+strings.Repeat("x", 38)); again != x {
		t.Errorf("hashed %q, then %q: want the same label for the same value", x, again)
	}
}

// FuzzMakeValid checks that every mode yields a valid label value or
// none, keeps valid values as they are, and is deterministic; sanitize and
// hash always yield one where the value holds a letter or digit.
func FuzzMakeValid(f *testing.F) {
	for _, s := range []string{"", "web", strings.Repeat("a", 91), "hello world", "café", "-_.", " /team/web/ ", "a\xffb", "日本語",
		strings.Repeat("ab/", 40), strings.Repeat("x", 63), strings.Repeat("x", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, mode := range Modes {
			got, how, ok := MakeValid(mode, v)
			again, howAgain, okAgain := MakeValid(mode, v)
			if got != again || how != howAgain || ok != okAgain {
				t.Fatalf("MakeValid(%q, %q) is not deterministic", mode, v)
			}
			switch {
			case ok && !Valid(got):
				t.Errorf("MakeValid(%q, %q) = %q, no valid label value", mode, v, got)
			case Valid(v) && (!ok || got != v || how != ""):
				t.Errorf("MakeValid(%q, %q) = %q, %q, %v; want the valid value kept", mode, v, got, how, ok)
			case !Valid(v) && ok && (got == "" || how == "" || !utf8.ValidString(got)):
				t.Errorf("MakeValid(%q, %q) = %q, %q; want a value and how it was made", mode, v, got, how)
			case mode == Hash && !ok:
				t.Errorf("MakeValid(hash, %q) yields nothing; a hash is always a value", v)
			case mode == Sanitize && !ok && strings.ContainsFunc(v, isAlnum):
				t.Errorf("MakeValid(sanitize, %q) yields nothing, but the value holds a letter or digit", v)
			}
		}
	})
}

// isAlnum reports whether r is an ASCII letter or digit.
func isAlnum(r rune) bool {
	return r < utf8.RuneSelf && labelChar(r) && !strings.ContainsRune(trimmed, r)
}
