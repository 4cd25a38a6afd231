package glob

import (
	"path"
	"strings"
)

// Check returns why g is not a glob (path.ErrBadPattern), or nil.
func Check(g string) error {
	_, err := path.Match(g, "")
	return err
}

// First returns the first of globs that name matches, and whether one
// does. A glob that is not one (see Check) matches nothing.
func First(globs []string, name string) (string, bool) {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return g, true
		}
	}
	return "", false
}

// Any reports whether name matches any of globs.
func Any(globs []string, name string) bool {
	_, ok := First(globs, name)
	return ok
}

// MatchKey reports whether the label or annotation key matches g, a glob
// in which, unlike Check's, * and ? match '/' too: "*" matches every key,
// "example.com/*" every key of that prefix.
func MatchKey(g, key string) bool {
	ok, _ := path.Match(strings.ReplaceAll(g, "/", "\x00"), strings.ReplaceAll(key, "/", "\x00"))
	return ok
}
