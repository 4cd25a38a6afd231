package rulefile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

// decoder walks the YAML node tree against the schema, collecting every
// problem instead of stopping at the first. Walking nodes (rather than
// unmarshalling into structs) keeps line numbers and the user's own
// spelling of a value, so that `True` can be reported as `True`.
type decoder struct {
	errs   []FieldError
	names  map[string]int // rule name → index of the first rule using it
	index  int            // index of the rule being decoded
	visits int            // values visited, counting alias expansions
	nodes  int            // values the file writes, aliases not followed
	capped bool           // decoding stopped at maxErrors
	depth  int            // value forms given as defaults around the one decoded
	// keyLine is the line of the key whose value a fields callback decodes,
	// for errors about the key itself.
	keyLine int
	// lines holds the line of fields that checks after decoding report,
	// by path (see lineOf).
	lines map[string]int
}

// lineOf records the line of the value v of the field at path, for checks
// that look at the whole file once it is decoded (see settle).
func (d *decoder) lineOf(path string, v *yaml.Node) {
	if d.lines == nil {
		d.lines = map[string]int{}
	}
	d.lines[path] = v.Line
}

// maxVisits bounds the values the decoder visits, or the values the file
// writes where they are more: aliases let a small file name the same large
// value many times; no real rules file comes near it. What the file
// writes is bounded by MaxFileSize.
const maxVisits = 20_000

// maxErrors bounds the problems reported for one file.
const maxErrors = 100

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	d.errs = append(d.errs, FieldError{Line: n.Line, Field: field, Message: fmt.Sprintf(format, args...)})
}

// exhausted counts one value visited and reports whether decoding must
// stop: the file is too complex, or has too many problems to list.
func (d *decoder) exhausted() bool {
	d.visits++
	switch {
	case d.visits == max(maxVisits, d.nodes)+1:
		d.errs = append(d.errs, FieldError{Message: fmt.Sprintf(
			"too complex: its aliases expand it to more than %d values, where it writes %d (excessive aliasing); write the values out, or alias fewer",
			max(maxVisits, d.nodes), d.nodes)})
	case len(d.errs) >= maxErrors:
		d.capped = true
		return true
	}
	return d.visits > max(maxVisits, d.nodes)
}

// countNodes counts the values of the tree at n, without following
// aliases.
func countNodes(n *yaml.Node) int {
	c := 1
	for _, child := range n.Content {
		c += countNodes(child)
	}
	return c
}

func (d *decoder) file(root *yaml.Node) *File {
	d.nodes = countNodes(root)
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "", `expected a mapping with a "rules" list, got %s`, describe(n))
		return nil
	}
	f := &File{Version: Version}
	fileSchema.decode(d, n, "", f)
	f.SetLines(d.lines)
	return f
}

func (d *decoder) rules(n *yaml.Node, path string) []Rule {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "must be a list of rules, got %s", describe(n))
		return nil
	}

	d.names = map[string]int{}
	out := make([]Rule, 0, len(n.Content))
	for i, item := range n.Content {
		if d.exhausted() {
			break
		}
		d.index = i
		out = append(out, d.rule(deref(item), fmt.Sprintf("%s[%d]", path, i)))
	}
	if len(n.Content) > MaxRules && !d.capped {
		d.errorf(n, path, "holds %d rules, more than the %d a file may hold: loading compares every pair of rules, "+
			"which grows with the square of their number; combine rules that differ only in their names or namespaces", len(n.Content), MaxRules)
	}
	return out
}

func (d *decoder) rule(n *yaml.Node, path string) Rule {
	var r Rule
	d.lineOf(path, n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "must be a mapping with name, resources and what to set, got %s", describe(n))
		return r
	}
	if seen := ruleSchema.decode(d, n, path, &r); !ruleSchema.setsSome(seen) {
		d.errorf(n, path, "sets nothing: give %s", setters)
	}
	for _, kind := range []string{AnnotationKind, LabelKind} {
		m := r.Of(kind)
		d.setAndRemove(n, FieldPath(path, "remove"+kindField[kind]), m.Remove, m.Values, m.Computed())
	}
	d.relatedFor(n, path, &r)
	return r
}

// setAndRemove reports keys a rule both sets and removes.
func (d *decoder) setAndRemove(n *yaml.Node, path string, remove []string, set ...map[string]string) {
	for _, k := range remove {
		if slices.ContainsFunc(set, func(m map[string]string) bool { _, ok := m[k]; return ok }) {
			d.errorf(n, path, "%q is both set and removed by the rule", k)
		}
	}
}

func (d *decoder) ruleName(n *yaml.Node, path string) string {
	name, ok := d.str(n, path)
	if !ok {
		return ""
	}
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		d.errorf(n, path, "invalid name %q: %s", name, strings.Join(msgs, "; "))
	}
	if first, dup := d.names[name]; dup {
		d.errorf(n, path, "duplicate name %q; rules[%d] already uses it", name, first)
	} else {
		d.names[name] = d.index
	}
	return name
}

func (d *decoder) resources(n *yaml.Node, path string) []string {
	seen := map[string]bool{}
	return d.list(n, path, "resource names", "must name at least one resource", func(item *yaml.Node, p, s string) bool {
		switch {
		case s == "":
			d.errorf(item, p, "must not be empty")
		case strings.ContainsAny(s, " \t\n/,"):
			d.errorf(item, p, "invalid resource %q: name one resource as kubectl does, e.g. deployments, deploy or frigates.ship.nwiizo.dev", s)
		case seen[s]:
			d.errorf(item, p, "duplicate resource %q", s)
		default:
			seen[s] = true
			return true
		}
		return false
	})
}

// list decodes n, found at path, a list of what ("resource names") that
// must not be empty (empty says so when it is). Each item that is a
// string is given to item, with its path, which reports what is wrong
// with it and says whether to keep it.
func (d *decoder) list(n *yaml.Node, path, what, empty string, item func(n *yaml.Node, p, s string) bool) []string {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "must be a list of %s, got %s", what, describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		d.errorf(n, path, "%s", empty)
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, it := range n.Content {
		if d.exhausted() {
			break
		}
		p := fmt.Sprintf("%s[%d]", path, i)
		if s, ok := d.str(deref(it), p); ok && item(it, p, s) {
			out = append(out, s)
		}
	}
	return out
}

// fields calls fn for each key of mapping n in order, reporting non-string,
// duplicate and (when known is not nil) unknown keys. It returns the keys seen.
func (d *decoder) fields(n *yaml.Node, path string, known []string, fn func(key, path string, v *yaml.Node)) map[string]bool {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if d.exhausted() {
			break
		}
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			d.errorf(k, path, "keys must be strings, got %s", describe(k))
			continue
		}
		p := FieldPath(path, k.Value)
		switch {
		case seen[k.Value]:
			d.errorf(k, p, "duplicate key")
		case known != nil && !slices.Contains(known, k.Value):
			d.errorf(k, p, "unknown field%s; known fields are %s", suggest(k.Value, known), strings.Join(known, ", "))
		default:
			seen[k.Value] = true
			d.keyLine = k.Line
			fn(k.Value, p, v)
		}
	}
	return seen
}

// str expects a string scalar, such as a name.
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return n.Value, true
	}
	d.errorf(n, path, "must be a string, got %s", describe(n))
	return "", false
}

// value expects a string scalar that is a value users type by hand. YAML
// reads True, 1 or 1.0 unquoted as a boolean or number, which is not what the
// API server stores, so say how to write what was meant.
func (d *decoder) value(n *yaml.Node, path string) (string, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str":
			return n.Value, true
		case "!!bool", "!!int", "!!float", "!!timestamp":
			d.errorf(n, path, "value must be a string; quote it: %s", strconv.Quote(n.Value))
			return "", false
		case "!!null":
			d.errorf(n, path, `value must be a string, got null; write "" for an empty value`)
			return "", false
		}
	}
	d.errorf(n, path, "value must be a string, got %s", describe(n))
	return "", false
}

// deref follows YAML aliases to the node they name. Only the nodes the schema
// asks for are visited, so an alias bomb is never expanded.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func describe(n *yaml.Node) string {
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

// suggest returns ` (did you mean "x"?)` when a known field is within two
// edits of the unknown one, such as "resource" for "resources".
func suggest(unknown string, known []string) string {
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
