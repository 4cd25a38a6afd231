package admission

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// quote is s as a CEL string literal. Go's escapes (\", \\, \n, \xHH,
// \uHHHH, \UHHHHHHHH) are also CEL's.
func quote(s string) string { return strconv.Quote(s) }

// globRegexp translates a glob in path.Match syntax into an anchored RE2
// regular expression that matches the same strings: * is any run of
// characters but '/', ? one character but '/', [...] a class (^ negates),
// and \ quotes the next character. It fails on a glob path.Match rejects.
// (Namespace and object names hold no '/', but the translation is exact.)
func globRegexp(glob string) (string, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); {
		switch c := glob[i]; c {
		case '*':
			b.WriteString("[^/]*")
			i++
		case '?':
			b.WriteString("[^/]")
			i++
		case '[':
			n, err := globClass(&b, glob[i+1:])
			if err != nil {
				return "", fmt.Errorf("glob %q: %w", glob, err)
			}
			i += 1 + n
		case '\\':
			if i+1 >= len(glob) {
				return "", fmt.Errorf("glob %q: trailing backslash", glob)
			}
			r, size := utf8.DecodeRuneInString(glob[i+1:])
			b.WriteString(regexp.QuoteMeta(string(r)))
			i += 1 + size
		default:
			r, size := utf8.DecodeRuneInString(glob[i:])
			b.WriteString(regexp.QuoteMeta(string(r)))
			i += size
		}
	}
	b.WriteString("$")
	return b.String(), nil
}

// globClass writes the character class that s begins with (after its '[')
// as an RE2 class, and returns how many bytes of s it took, ']' included.
// A reversed range, which path.Match accepts, matches nothing.
func globClass(b *strings.Builder, s string) (int, error) {
	i := 0
	negated := strings.HasPrefix(s, "^")
	if negated {
		i++
	}
	var ranges []string
	for n := 0; ; n++ {
		if i >= len(s) {
			return 0, fmt.Errorf("unterminated character class")
		}
		if s[i] == ']' && n > 0 {
			i++
			break
		}
		lo, size, err := classChar(s[i:])
		if err != nil {
			return 0, err
		}
		i += size
		hi := lo
		if i < len(s) && s[i] == '-' {
			if hi, size, err = classChar(s[i+1:]); err != nil {
				return 0, err
			}
			i += 1 + size
		}
		if lo <= hi {
			ranges = append(ranges, fmt.Sprintf(`\x{%x}-\x{%x}`, lo, hi))
		}
	}
	if len(ranges) == 0 { // matches no character, or (negated) any
		negated = !negated
		ranges = []string{`\x{0}-\x{10ffff}`}
	}
	b.WriteString("[")
	if negated {
		b.WriteString("^")
	}
	b.WriteString(strings.Join(ranges, "") + "]")
	return i, nil
}

// classChar reads one character of a class, possibly \-quoted.
func classChar(s string) (rune, int, error) {
	if s == "" || s[0] == '-' || s[0] == ']' {
		return 0, 0, fmt.Errorf("bad character class")
	}
	n := 0
	if s[0] == '\\' {
		n = 1
		if len(s) == 1 {
			return 0, 0, fmt.Errorf("bad character class")
		}
	}
	r, size := utf8.DecodeRuneInString(s[n:])
	return r, n + size, nil
}

// anyGlob is a CEL condition: the string expression s matches any of globs.
func anyGlob(s string, globs []string) (string, error) {
	var alts []string
	for _, g := range globs {
		re, err := globRegexp(g)
		if err != nil {
			return "", err
		}
		alts = append(alts, s+".matches("+quote(re)+")")
	}
	return "(" + strings.Join(alts, " || ") + ")", nil
}

// selectorCEL is a CEL condition: the label map expression m matches the
// label selector sel (kubectl syntax), as labels.Selector.Matches does.
func selectorCEL(sel, m string) (string, error) {
	parsed, err := labels.Parse(sel)
	if err != nil {
		return "", err
	}
	reqs, _ := parsed.Requirements()
	if len(reqs) == 0 {
		return "true", nil
	}
	var terms []string
	for _, r := range reqs {
		k := quote(r.Key())
		in := k + " in " + m
		val := m + "[" + k + "]"
		values := r.Values().List()
		var list []string
		for _, v := range values {
			list = append(list, quote(v))
		}
		set := "[" + strings.Join(list, ", ") + "]"
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			terms = append(terms, fmt.Sprintf("(%s && %s in %s)", in, val, set))
		case selection.NotEquals, selection.NotIn:
			terms = append(terms, fmt.Sprintf("(!(%s) || !(%s in %s))", in, val, set))
		case selection.Exists:
			terms = append(terms, in)
		case selection.DoesNotExist:
			terms = append(terms, "!("+in+")")
		case selection.GreaterThan, selection.LessThan:
			op := ">"
			if r.Operator() == selection.LessThan {
				op = "<"
			}
			terms = append(terms, fmt.Sprintf(`(%s && %s.matches("^-?[0-9]+$") && int(%s) %s %s)`, in, val, val, op, values[0]))
		default:
			return "", fmt.Errorf("label selector %q: operator %q", sel, r.Operator())
		}
	}
	return "(" + strings.Join(terms, " && ") + ")", nil
}

// labelSelector is sel as a metav1.LabelSelector, for a policy's
// objectSelector or namespaceSelector, or nil when it has a requirement
// that a LabelSelector cannot state (> and <).
func labelSelector(sel string) (*metav1.LabelSelector, error) {
	parsed, err := labels.Parse(sel)
	if err != nil {
		return nil, err
	}
	reqs, _ := parsed.Requirements()
	out := &metav1.LabelSelector{}
	for _, r := range reqs {
		req := metav1.LabelSelectorRequirement{Key: r.Key(), Values: r.Values().List()}
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			req.Operator = metav1.LabelSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			req.Operator = metav1.LabelSelectorOpNotIn
		case selection.Exists:
			req.Operator, req.Values = metav1.LabelSelectorOpExists, nil
		case selection.DoesNotExist:
			req.Operator, req.Values = metav1.LabelSelectorOpDoesNotExist, nil
		default:
			return nil, nil
		}
		out.MatchExpressions = append(out.MatchExpressions, req)
	}
	return out, nil
}

// celKey is the key name of kind that c computes with the CEL expression
// expr, whose default and ifInvalid m gives: the same expression, in the
// same variables; a result that is no string, or no valid value, sets
// nothing. (An error fails the policy, which is ignored: the controller
// sets the key.) One that reads ownerObject is the controller's.
func celKey(c *rules.Compiled, m *rulefile.Metadata, kind, name, expr string) *key {
	present := fmt.Sprintf("type(%s) == string", "("+expr+")")
	if c.ReadsRequest(kind, name) {
		// Who asks for a later change did not create the object: a value
		// read from the request is recorded at CREATE.
		present = atCreate + " && " + present
	}
	k := &key{kind: kind, name: name, from: expr, val: value{present: present, text: "(" + expr + ")"}}
	k.val = k.val.checked(kind, name, m.Default, m.IfInvalid)
	if c.ReadsOwnerObject(expr) {
		k.err = errOwnerObject
	}
	return k
}
