package yamlfield

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Decoder walks a YAML node tree, collecting every problem instead of
// stopping at the first. Walking nodes (rather than unmarshalling into
// structs) keeps line numbers and the user's own spelling of a value, so
// that `True` can be reported as `True`.
type Decoder struct {
	// Errs are the problems found, in the order found.
	Errs []spec.FieldError
	// Visits counts the values visited, counting alias expansions; Nodes
	// the values the file writes, aliases not followed (CountNodes).
	Visits, Nodes int
	// Capped is set when decoding stopped at MaxErrors.
	Capped bool
	// KeyLine is the line of the key whose value a Fields callback
	// decodes, for errors about the key itself.
	KeyLine int
	// Lines holds the line of fields that checks after decoding report,
	// by path (see LineOf).
	Lines map[string]int
}

// LineOf records the line of the value v of the field at path, for checks
// that look at the whole file once it is decoded (see settle).
func (d *Decoder) LineOf(path string, v *yaml.Node) {
	if d.Lines == nil {
		d.Lines = map[string]int{}
	}
	d.Lines[path] = v.Line
}

// maxVisits bounds the values the decoder visits, or the values the file
// writes where they are more: aliases let a small file name the same large
// value many times; no real rules file comes near it. What the file
// writes is bounded by MaxFileSize.
const maxVisits = 20_000

// MaxErrors bounds the problems reported for one file.
const MaxErrors = 100

// Errorf reports a problem of the value n, at the field path.
func (d *Decoder) Errorf(n *yaml.Node, field, format string, args ...any) {
	d.Errs = append(d.Errs, spec.FieldError{Line: n.Line, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Exhausted counts one value visited and reports whether decoding must
// stop: the file is too complex, or has too many problems to list.
func (d *Decoder) Exhausted() bool {
	d.Visits++
	switch {
	case d.Visits == max(maxVisits, d.Nodes)+1:
		d.Errs = append(d.Errs, spec.FieldError{Message: fmt.Sprintf(
			"too complex: its aliases expand it to more than %d values, where it writes %d (excessive aliasing); write the values out, or alias fewer",
			max(maxVisits, d.Nodes), d.Nodes)})
	case len(d.Errs) >= MaxErrors:
		d.Capped = true
		return true
	}
	return d.Visits > max(maxVisits, d.Nodes)
}

// CountNodes counts the values of the tree at n, without following
// aliases.
func CountNodes(n *yaml.Node) int {
	c := 1
	for _, child := range n.Content {
		c += CountNodes(child)
	}
	return c
}

// List decodes n, found at path, a list of what ("resource names") that
// must not be empty (empty says so when it is). Each item that is a
// string is given to item, with its path, which reports what is wrong
// with it and says whether to keep it.
func (d *Decoder) List(n *yaml.Node, path, what, empty string, item func(n *yaml.Node, p, s string) bool) []string {
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, path, "must be a list of %s, got %s", what, Describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		d.Errorf(n, path, "%s", empty)
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, it := range n.Content {
		if d.Exhausted() {
			break
		}
		p := fmt.Sprintf("%s[%d]", path, i)
		if s, ok := d.Str(Deref(it), p); ok && item(it, p, s) {
			out = append(out, s)
		}
	}
	return out
}

// UniqueList decodes n as List does, and reports an item given before as
// a duplicate ("duplicate resource %q", noun "resource"), before item
// sees it.
func (d *Decoder) UniqueList(n *yaml.Node, path, what, empty, noun string, item func(n *yaml.Node, p, s string) bool) []string {
	seen := map[string]bool{}
	return d.List(n, path, what, empty, func(it *yaml.Node, p, s string) bool {
		if seen[s] {
			d.Errorf(it, p, "duplicate %s %q", noun, s)
			return false
		}
		seen[s] = true
		return item(it, p, s)
	})
}

// Fields calls fn for each key of mapping n in order, reporting non-string,
// duplicate and (when known is not nil) unknown keys. It returns the keys seen.
func (d *Decoder) Fields(n *yaml.Node, path string, known []string, fn func(key, path string, v *yaml.Node)) map[string]bool {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if d.Exhausted() {
			break
		}
		k, v := Deref(n.Content[i]), Deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			d.Errorf(k, path, "keys must be strings, got %s", Describe(k))
			continue
		}
		p := spec.FieldPath(path, k.Value)
		switch {
		case seen[k.Value]:
			d.Errorf(k, p, "duplicate key")
		case known != nil && !slices.Contains(known, k.Value):
			d.Errorf(k, p, "unknown field%s; known fields are %s", Suggest(k.Value, known), strings.Join(known, ", "))
		default:
			seen[k.Value] = true
			d.KeyLine = k.Line
			fn(k.Value, p, v)
		}
	}
	return seen
}

// Str expects a string scalar, such as a name.
func (d *Decoder) Str(n *yaml.Node, path string) (string, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return n.Value, true
	}
	d.Errorf(n, path, "must be a string, got %s", Describe(n))
	return "", false
}

// Value expects a string scalar that is a value users type by hand. YAML
// reads True, 1 or 1.0 unquoted as a boolean or number, which is not what the
// API server stores, so say how to write what was meant.
func (d *Decoder) Value(n *yaml.Node, path string) (string, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str":
			return n.Value, true
		case "!!bool", "!!int", "!!float", "!!timestamp":
			d.Errorf(n, path, "value must be a string; quote it: %s", strconv.Quote(n.Value))
			return "", false
		case "!!null":
			d.Errorf(n, path, `value must be a string, got null; write "" for an empty value`)
			return "", false
		}
	}
	d.Errorf(n, path, "value must be a string, got %s", Describe(n))
	return "", false
}

// Deref follows YAML aliases to the node they name. Only the nodes the schema
// asks for are visited, so an alias bomb is never expanded.
func Deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// Describe names what n is, for errors: "a mapping", "a number (1)".
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return strconv.Quote(n.Value)
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		case "!!int", "!!float":
			return "a number (" + n.Value + ")"
		}
		return "a " + strings.TrimPrefix(n.ShortTag(), "!!") + " (" + n.Value + ")"
	}
	return "nothing"
}

// Suggest returns ` (did you mean "x"?)` when a known field is within two
// edits of the unknown one, such as "resource" for "resources".
func Suggest(unknown string, known []string) string {
	for _, k := range known {
		if EditDistance(strings.ToLower(unknown), k) <= 2 {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	return ""
}

// EditDistance is the Levenshtein distance between a and b, in bytes.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Boolean expects a YAML boolean: true or false.
func (d *Decoder) Boolean(n *yaml.Node, path string) bool {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err == nil {
			return b
		}
	}
	d.Errorf(n, path, "must be true or false, got %s", Describe(n))
	return false
}
