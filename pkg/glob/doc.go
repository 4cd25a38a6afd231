// Package glob is the one place where the globs of rules and flags —
// namespaces, excludeNamespaces, names, --exclude-namespaces — are
// checked and matched: path.Match syntax (*, ?, [a-z]) on a whole name.
//
// Check says whether a string is a glob; Any and First match a name
// against a list of them.
//
// Layer "base" of deps_test.go: it imports nothing of kube-annotator.
package glob
